import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { costField, normalizePrice, saysFree } from '../../../../workers/snapshot/normalize/price.ts';

const p = (priceText: string | null, isFree: boolean | null = null, priceMin: number | null = null, priceMax: number | null = null) => ({ priceText, isFree, priceMin, priceMax });

describe('normalizePrice', () => {
  test('a range of amounts', () => assert.deepEqual(normalizePrice(p('$5–$8'), false), { isFree: false, min: 5, max: 8, note: '$5–$8' }));
  test('"Free" is free at zero', () => assert.deepEqual(normalizePrice(p('Free'), false), { isFree: true, min: 0, max: 0, note: 'Free' }));
  test('"Free with admission" is not free admission', () => assert.equal(normalizePrice(p('Free with museum admission'), false).isFree, false));
  test('an explicit upstream flag wins', () => assert.equal(normalizePrice(p('$10', true), false).isFree, true));
  test('numbers from fields count too', () => assert.deepEqual(normalizePrice(p(null, null, 12, 20), false), { isFree: false, min: 12, max: 20, note: null }));
  test('unknown price: the source default decides, and no price object is invented', () => {
    assert.deepEqual(normalizePrice(p(null), true), { isFree: true, min: null, max: null, note: null });
    assert.deepEqual(normalizePrice(p(null), false), { isFree: false, min: null, max: null, note: null });
  });
  test('an upstream price field is trusted over the description', () => {
    const text = { title: 'x', description: 'Cost: Free' };
    assert.deepEqual(normalizePrice(p('$12'), false, text), { isFree: false, min: 12, max: 12, note: '$12' });
  });
});

// seattle-gov-citywide.trumba.ics: Trumba writes its custom fields into DESCRIPTION, one per <br> line.
const SEATTLE_TENNIS =
  'Site Contact Details: Outdoors. Subject to rain cancelation. We notify participants and volunteers if rained out. Note just b/c rain may be happening in the city does not mean the event is canceled. There is parking near the courts.<br>Audience: Adults,Senior,Teen<br>Pre-Register: Yes<br>Cost: Free<br>Link: https://amyyee10usfoundation.org/<br><br>This is a free 4-week series for youth';
// knco-nevada-county.trumba-rss.xml: the Trumba RSS description (once the XML is decoded) bolds its labels.
const knco = (price: string) => `<br/><b>City/Area</b>:&nbsp;Nevada City <br/><b>Price</b>:&nbsp;${price} <br/><b>Age range</b>:&nbsp;All ages <br/>`;

describe('costField: the "Cost:"/"Price:" line of a description', () => {
  test('Trumba iCalendar (Seattle): "Cost: Free" between <br> lines', () => assert.equal(costField(SEATTLE_TENNIS), 'Free'));
  test('Trumba iCalendar (Seattle): "Cost: 25-100", "Cost: $3 to public"', () => {
    assert.equal(costField('Pre-Register: No<br>Cost: 25-100<br>Link: https://www.seattle.gov/'), '25-100');
    assert.equal(costField('Pre-Register: No<br>Cost: $3 to public<br>'), '$3 to public');
  });
  test('Trumba RSS (KNCO): "<b>Price</b>:&nbsp;free - donations welcome"', () => {
    assert.equal(costField(knco('free - donations welcome')), 'free - donations welcome');
    assert.equal(costField(knco('$699')), '$699');
  });
  test('a field inside prose ends with its sentence (Wallyhood: "Cost: $220 for the full 9 weeks.")', () => {
    const wallyhood = 'Offered by the Scandinavian Language Institute. Cost: $220 for \nthe full 9 weeks.<br><br><a href="https://www.scanlang.org/">https://www.scanlang.org/</a>';
    assert.equal(costField(wallyhood.replace('\n', '')), '$220 for the full 9 weeks.');
  });
  test('fields run together end at the next one (KNCO: "Price: $60    Ages: Adults and teens 10+")', () =>
    assert.equal(costField('Time: 1:00 PM – 5:00 PM (4 hours total)    Price: $60    Ages: Adults and teens 10+ (no experience needed)'), '$60'));
  test('a colon inside the value stays (KNCO: "Price:&nbsp;Voluntary: Suggested Donation $5")', () =>
    assert.equal(costField(knco('Voluntary: Suggested Donation $5 &#160;- No One Turned Away')), 'Voluntary: Suggested Donation $5 - No One Turned Away'));
  test('"cost" in prose is no field (Seattle: "The cost for participants wishing to obtain a certification")', () =>
    assert.equal(costField('All are welcome to attend at no cost if a certification is not required. The cost for participants wishing to obtain a certification is $25.'), null));
});

describe('normalizePrice reads the description and the title when there is no price field', () => {
  const read = (title: string, description: string | null) => normalizePrice(p(null), false, { title, description });
  test('Seattle "Cost: Free" → free at zero', () => assert.deepEqual(read('Amy Yee (Youth) Tennis Clinics (Free)', SEATTLE_TENNIS), { isFree: true, min: 0, max: 0, note: 'Free' }));
  test('Seattle "Cost: 25-100": bare numbers in a cost field are amounts', () =>
    assert.deepEqual(read('Jazz Night', 'Cost: 25-100<br>'), { isFree: false, min: 25, max: 100, note: '25-100' }));
  test('KNCO "Price: 0" is free; "free - donations welcome" is free; "FREE!" is free', () => {
    assert.deepEqual(read('Open Studio', knco('0')), { isFree: true, min: 0, max: 0, note: '0' });
    assert.equal(read('Meditation', knco('free - donations welcome')).isFree, true);
    assert.equal(read('THE THURSDAY MURDER CLUB', knco('FREE!')).isFree, true);
  });
  test('KNCO "Price: $140.00 for a series of 4 $45.00 drop ins" → 45–140', () =>
    assert.deepEqual(read('Yoga', knco('$140.00 for a series of 4 $45.00 drop ins')), { isFree: false, min: 45, max: 140, note: '$140.00 for a series of 4 $45.00 drop ins' }));
  test('Wallyhood "Cost: $220 for the full 9 weeks." → 220', () =>
    assert.deepEqual(read('Beginning Norwegian', 'Offered by the Scandinavian Language Institute. Cost: $220 for the full 9 weeks.<br><br>'), {
      isFree: false, min: 220, max: 220, note: '$220 for the full 9 weeks.',
    }));
  test('a suggested donation is not free (KNCO "Suggested Donation:  $10-$35")', () => assert.equal(read('Concert', knco('Suggested Donation:  $10-$35')).isFree, false));
  test('title "(Free)" (Seattle "Amy Yee (Youth) Tennis Clinics (Free)") → free at zero', () =>
    assert.deepEqual(read('Amy Yee (Youth) Tennis Clinics (Free)', null), { isFree: true, min: 0, max: 0, note: null }));
  test('"free" elsewhere in a title is not a marker (Seattle "Free zines", KNCO "Shows FREE at the Mystic Theater!")', () => {
    assert.equal(read('Free zines and button making', null).isFree, false);
    assert.equal(read('The New English Mystery THE THURSDAY MURDER CLUB Shows FREE at the Mystic Theater!', null).isFree, false);
  });
  test('prose that says the event is free', () => {
    // royal-room.wp-rss.xml, knco-nevada-county.trumba-rss.xml, united-indians-daybreak-star.ecp.ics
    assert.equal(read('Concert', 'Doors: 6:30pm | Show: 7:30pm This show is free and open to the public. Questions about the performance should').isFree, true);
    assert.equal(read('Mystery', 'Admission is free and the public is invited.').isFree, true);
    assert.equal(read('Fire Prevention Week', 'This FREE event brings together firefighters, activities').isFree, true);
    assert.equal(read('Lecture', 'This event is completely free to attend!').isFree, true);
  });
  test('prose "free" that is no free admission', () => {
    // mohai.ecp.ics: free on one day a month; royal-room.wp-rss.xml: free tickets for some; "feel free", "free parking".
    assert.equal(read('Exhibit', 'Visit MOHAI on the First Thursday of every month for free admission to the museum’s permanent exhibits').isFree, false);
    assert.equal(read('Show', 'families, veterans, and humanitarian nonprofit workers with free event tickets*.').isFree, false);
    assert.equal(read('Zine workshop', 'to incorporate into your zine, but feel free to explore HistoryLink.org').isFree, false);
    assert.equal(read('Exhibit', 'This event is free with museum admission.').isFree, false);
  });
});

describe('saysFree: "free" about admission only', () => {
  test('free', () => {
    for (const s of ['Free', 'FREE!', 'free - donations welcome', 'Free Admission - games and entertainment tickets for purchase', 'Free and open to the public']) assert.equal(saysFree(s), true, s);
  });
  test('not free', () => {
    for (const s of ['Free with museum admission', 'Suggested Donation $5', 'Gluten-free snacks provided', 'feel free to bring a friend', 'Free parking', '$10 plus admission']) assert.equal(saysFree(s), false, s);
  });
});

describe('costField: a line that is only a price', () => {
  test('wallyhood.google.ics "DESCRIPTION:Free" (Band Concert at Lincoln High School)', () => {
    assert.equal(costField('Free'), 'Free');
    assert.deepEqual(normalizePrice(p(null), false, { title: 'Band Concert at Lincoln High School', description: 'Free' }), { isFree: true, min: 0, max: 0, note: 'Free' });
  });
  test('a sentence that starts with "Free" is no price line (Seattle "Free zines")', () => assert.equal(costField('Free zines, stickers and snacks'), null));
});

describe('free for some beside a price (knco-nevada-county.trumba-rss.xml "Price" fields)', () => {
  test('"Free-$15" → 0–15, not free', () => assert.deepEqual(normalizePrice(p('Free-$15'), false), { isFree: false, min: 0, max: 15, note: 'Free-$15' }));
  test('"Adults: $15, Kids 6-12: $10, Kids 5 and under: FREE" → 0–15', () =>
    assert.deepEqual(normalizePrice(p('Adults: $15, Kids 6-12: $10, Kids 5 and under: FREE'), false), { isFree: false, min: 0, max: 15, note: 'Adults: $15, Kids 6-12: $10, Kids 5 and under: FREE' }));
  test('"$10 Adult meal $5 kids plate" → 5–10', () => assert.deepEqual(normalizePrice(p('$10 Adult meal $5 kids plate'), false), { isFree: false, min: 5, max: 10, note: '$10 Adult meal $5 kids plate' }));
});
