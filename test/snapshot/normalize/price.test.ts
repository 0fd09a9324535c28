import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { mergeGroup } from '../../../snapshot/normalize/merge.ts';
import { costField, normalizePrice, saysFree, type Price } from '../../../snapshot/normalize/price.ts';
import type { EventRow } from '../../../core/record.ts';

const p = (priceText: string | null, isFree: boolean | null = null, priceMin: number | null = null, priceMax: number | null = null) => ({
  priceText,
  isFree,
  priceMin,
  priceMax,
});

describe('normalizePrice', () => {
  test('a range of amounts', () => assert.deepEqual(normalizePrice(p('$5–$8'), false), { isFree: false, min: 5, max: 8, note: '$5–$8' }));
  test('"Free" is free at zero', () => assert.deepEqual(normalizePrice(p('Free'), false), { isFree: true, min: 0, max: 0, note: 'Free' }));
  test('"Free with admission" is not free admission, and no price of its own', () =>
    assert.deepEqual(normalizePrice(p('Free with museum admission'), false), { isFree: false, min: null, max: null, note: 'Free with museum admission' }));
  test('an explicit upstream flag decides when nothing states a price', () => {
    assert.deepEqual(normalizePrice(p(null, true), false), { isFree: true, min: 0, max: 0, note: null });
    assert.deepEqual(normalizePrice(p(null, false), true), { isFree: false, min: null, max: null, note: null });
  });
  test('a stated amount wins over the upstream flag: a "free" flag beside $10 is not free', () =>
    assert.deepEqual(normalizePrice(p('$10', true), false), { isFree: false, min: 10, max: 10, note: '$10' }));
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
    const wallyhood =
      'Offered by the Scandinavian Language Institute. Cost: $220 for \nthe full 9 weeks.<br><br><a href="https://www.scanlang.org/">https://www.scanlang.org/</a>';
    assert.equal(costField(wallyhood.replace('\n', '')), '$220 for the full 9 weeks.');
  });
  test('fields run together end at the next one (KNCO: "Price: $60    Ages: Adults and teens 10+")', () =>
    assert.equal(costField('Time: 1:00 PM – 5:00 PM (4 hours total)    Price: $60    Ages: Adults and teens 10+ (no experience needed)'), '$60'));
  test('a colon inside the value stays (KNCO: "Price:&nbsp;Voluntary: Suggested Donation $5")', () =>
    assert.equal(costField(knco('Voluntary: Suggested Donation $5 &#160;- No One Turned Away')), 'Voluntary: Suggested Donation $5 - No One Turned Away'));
  test('"cost" in prose is no field (Seattle: "The cost for participants wishing to obtain a certification")', () =>
    assert.equal(
      costField('All are welcome to attend at no cost if a certification is not required. The cost for participants wishing to obtain a certification is $25.'),
      null,
    ));
});

describe('normalizePrice reads the description and the title when there is no price field', () => {
  const read = (title: string, description: string | null) => normalizePrice(p(null), false, { title, description });
  test('Seattle "Cost: Free" → free at zero', () =>
    assert.deepEqual(read('Amy Yee (Youth) Tennis Clinics (Free)', SEATTLE_TENNIS), { isFree: true, min: 0, max: 0, note: 'Free' }));
  test('Seattle "Cost: 25-100": bare numbers in a cost field are amounts', () =>
    assert.deepEqual(read('Jazz Night', 'Cost: 25-100<br>'), { isFree: false, min: 25, max: 100, note: '25-100' }));
  test('KNCO "Price: 0" is free; "free - donations welcome" is free; "FREE!" is free', () => {
    assert.deepEqual(read('Open Studio', knco('0')), { isFree: true, min: 0, max: 0, note: '0' });
    assert.equal(read('Meditation', knco('free - donations welcome')).isFree, true);
    assert.equal(read('THE THURSDAY MURDER CLUB', knco('FREE!')).isFree, true);
  });
  test('KNCO "Price: $140.00 for a series of 4 $45.00 drop ins" → 45–140', () =>
    assert.deepEqual(read('Yoga', knco('$140.00 for a series of 4 $45.00 drop ins')), {
      isFree: false,
      min: 45,
      max: 140,
      note: '$140.00 for a series of 4 $45.00 drop ins',
    }));
  test('Wallyhood "Cost: $220 for the full 9 weeks." → 220', () =>
    assert.deepEqual(read('Beginning Norwegian', 'Offered by the Scandinavian Language Institute. Cost: $220 for the full 9 weeks.<br><br>'), {
      isFree: false,
      min: 220,
      max: 220,
      note: '$220 for the full 9 weeks.',
    }));
  test('a suggested donation is not free (KNCO "Suggested Donation:  $10-$35")', () =>
    assert.equal(read('Concert', knco('Suggested Donation:  $10-$35')).isFree, false));
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
    for (const s of [
      'Free',
      'FREE!',
      'free - donations welcome',
      'Free Admission - games and entertainment tickets for purchase',
      'Free and open to the public',
    ])
      assert.equal(saysFree(s), true, s);
  });
  test('not free', () => {
    for (const s of [
      'Free with museum admission',
      'Suggested Donation $5',
      'Gluten-free snacks provided',
      'feel free to bring a friend',
      'Free parking',
      '$10 plus admission',
    ])
      assert.equal(saysFree(s), false, s);
  });
});

describe('costField: a line that is only a price', () => {
  test('wallyhood.google.ics "DESCRIPTION:Free" (Band Concert at Lincoln High School)', () => {
    assert.equal(costField('Free'), 'Free');
    assert.deepEqual(normalizePrice(p(null), false, { title: 'Band Concert at Lincoln High School', description: 'Free' }), {
      isFree: true,
      min: 0,
      max: 0,
      note: 'Free',
    });
  });
  test('a sentence that starts with "Free" is no price line (Seattle "Free zines")', () => assert.equal(costField('Free zines, stickers and snacks'), null));
});

describe('free for some beside a price (knco-nevada-county.trumba-rss.xml "Price" fields)', () => {
  test('"Free-$15" → 0–15, not free', () => assert.deepEqual(normalizePrice(p('Free-$15'), false), { isFree: false, min: 0, max: 15, note: 'Free-$15' }));
  test('"Adults: $15, Kids 6-12: $10, Kids 5 and under: FREE" → 0–15', () =>
    assert.deepEqual(normalizePrice(p('Adults: $15, Kids 6-12: $10, Kids 5 and under: FREE'), false), {
      isFree: false,
      min: 0,
      max: 15,
      note: 'Adults: $15, Kids 6-12: $10, Kids 5 and under: FREE',
    }));
  test('"$10 Adult meal $5 kids plate" → 5–10', () =>
    assert.deepEqual(normalizePrice(p('$10 Adult meal $5 kids plate'), false), { isFree: false, min: 5, max: 10, note: '$10 Adult meal $5 kids plate' }));
});

// ---------------------------------------------------------------- issue 25: free and price from prose

const prose = (description: string | null, title = 'Event', weekday?: number, freeByDefault = false) =>
  normalizePrice(p(null), freeByDefault, { title, description, weekday });
const WEDNESDAY = 3;
const SATURDAY = 6;

describe('free events said in prose (issue 25: feeds we had never seen)', () => {
  test('the observed phrases, each in a description', () => {
    for (const d of ['Free admission', 'Free drop-in program', 'Free!', 'Free Entrance', 'Join us for this FREE, All Ages Event!'])
      assert.deepEqual(prose(d), { isFree: true, min: 0, max: 0, note: d }, d);
  });
  test('and their kin: other words, other places in the text, other case', () => {
    for (const d of [
      'Come one, come all. <p>FREE ADMISSION.</p> Bring a blanket.',
      'Entry is free.',
      'The workshop is completely free.',
      'Tickets for this program are free, but registration is required.',
      'A free, all-ages, family-friendly cultural event!',
      'Our volunteers host a free training session on fire safety.',
      'There is no charge for this program.',
      'Families can attend at no cost.',
      'Free Admission: no registration is needed and there is no fee to participate.',
      'Free to the public.',
      'Free and open to all.',
      'Price: $0',
      'Free parking, free admission, free fun!',
    ])
      assert.equal(prose(d).isFree, true, d);
  });
  test('a title that says so: "Free Family Day at the Museum", "Teen Open Gym (Free)"', () => {
    assert.deepEqual(prose(null, 'Free Family Day at the Museum'), { isFree: true, min: 0, max: 0, note: null });
    assert.equal(prose(null, 'Teen Open Gym (Free)').isFree, true);
  });
  test('a title that starts with "Free" (gold set: "Free Tax Help"); not "Free zines", "Free Play"', () => {
    assert.deepEqual(prose(null, 'Free Tax Help'), { isFree: true, min: 0, max: 0, note: null });
    for (const t of ['Free zines and button making', 'Free Play at the Rec Center', 'Free First Thursday at the Museum'])
      assert.equal(prose(null, t, 4).isFree, false, t);
  });
  test('one of a series of free events (gold set: seattle-parks-foundation "a series of free outdoor poetry gatherings")', () =>
    assert.equal(
      prose('Cascadia Poetics Lab invites you to a series of free outdoor poetry gatherings in Rainier Beach!', 'Poetry Gathering at Kubota Garden').isFree,
      true,
    ));
  test('"a free Saturday" is free time, not a free day (gold set: luma "anyone with a free Saturday")', () =>
    assert.equal(
      prose('An unstructured hangout for interns, engineers, founders, and anyone with a free Saturday.', 'Local Alignment', SATURDAY).isFree,
      false,
    ));
  test('"FREE Wednesdays" is free on a Wednesday, and says nothing of a Saturday', () => {
    assert.deepEqual(prose('FREE Wednesdays! See the new sea lion pups.', 'Zoo Day', WEDNESDAY), { isFree: true, min: 0, max: 0, note: 'FREE Wednesdays!' });
    assert.equal(prose('Admission is free on Wednesdays.', 'Zoo Day', WEDNESDAY).isFree, true);
    assert.deepEqual(prose('FREE Wednesdays! See the new sea lion pups.', 'Zoo Day', SATURDAY), { isFree: false, min: null, max: null, note: null });
  });
  test('free only on some days or hours is not a free event (mohai.ecp.ics "First Thursday", "FREE before 10pm")', () => {
    assert.equal(prose('Visit MOHAI on the First Thursday of every month for free admission to the museum’s permanent exhibits', 'Exhibit', 4).isFree, false);
    assert.equal(prose('Limited FREE before 10pm with RSVP.').isFree, false);
  });
  test('"free" said of something else is no free event', () => {
    for (const d of [
      'Free parking behind the library.',
      'Free popcorn and lemonade for everyone who comes.',
      'Gluten-free snacks provided.',
      'Feel free to bring a friend.',
      'Free play in the gym follows.',
      'The band mixes tropicalia and free jazz.',
      'We host many free community events throughout the summer.',
      'Chance to win a free pair of running shoes.',
    ])
      assert.equal(prose(d).isFree, false, d);
  });
});

describe('free for some: a price of 0 beside the others, not a free event', () => {
  test('"Kids 12 and under free" at a paid salsa night → 0–15', () =>
    assert.deepEqual(prose('Salsa lesson at 8, social dancing until midnight. Cover $15. Kids 12 and under free!'), {
      isFree: false,
      min: 0,
      max: 15,
      note: 'Cover $15. Kids 12 and under free!',
    }));
  test('"Free for members" at a paid event is not free', () => {
    assert.deepEqual(prose('Free for members, $10 general admission.'), { isFree: false, min: 0, max: 10, note: 'Free for members, $10 general admission.' });
    assert.equal(prose('Free for members.').isFree, false);
    assert.equal(prose('Members get in free.').isFree, false);
  });
  test('royal-room.wp-rss.xml: "free entrance to kids 12 and under" beside ticket prices', () =>
    assert.deepEqual(prose('Doors: 4:00pm | Show: 5:00pm Tickets: $15 advance | $20 door free entrance to kids 12 and under'), {
      isFree: false,
      min: 0,
      max: 20,
      note: 'Doors: 4:00pm | Show: 5:00pm Tickets: $15 advance | $20 door free entrance to kids 12 and under',
    }));
  test('knco: "Dinner tickets are just $15 for adults, $10 for kids 6-12, and FREE for kids 5 and under" → 0–15', () =>
    assert.deepEqual(prose('Dinner tickets are just $15 for adults, $10 for kids 6-12, and FREE for kids 5 and under.'), {
      isFree: false,
      min: 0,
      max: 15,
      note: 'Dinner tickets are just $15 for adults, $10 for kids 6-12, and FREE for kids 5 and under.',
    }));
  test('free for a group and nothing else stated: the source default stands (a library program is free)', () => {
    assert.equal(prose('Free for kids and teens with a library card.', 'Lego Club', undefined, true).isFree, true);
    assert.equal(prose('Free for kids and teens with a library card.', 'Lego Club', undefined, false).isFree, false);
  });
  test('spscc: "free for all SPSCC students, staff & faculty and a suggested $15 donation at the door" → 0–15', () => {
    const r = prose('The concert is free for all SPSCC students, staff & faculty and a suggested $15 donation at the door.');
    assert.deepEqual([r.isFree, r.min, r.max], [false, 0, 15]);
  });
});

describe('prices said in prose (issue 25)', () => {
  test('the observed phrases', () => {
    assert.deepEqual(prose('$25 admission'), { isFree: false, min: 25, max: 25, note: '$25 admission' });
    assert.deepEqual(prose('Tickets are $15 at the door.'), { isFree: false, min: 15, max: 15, note: 'Tickets are $15 at the door.' });
    assert.deepEqual(prose('$36 members, $46 non-members'), { isFree: false, min: 36, max: 46, note: '$36 members, $46 non-members' });
  });
  test('and their kin, anywhere in the description or the title', () => {
    const cases: [string, string, number, number][] = [
      ['Event', 'An evening of songs. <br>Tickets: $20 in advance, $25 at the door.<br>All ages.', 20, 25],
      ['Event', 'Join us! The cost is $5 per child; babies under 1 free.', 0, 5],
      ['Event', 'Suggested donation of $10 per family.', 10, 10],
      ['Event', 'Entry $8 for adults, $4 for seniors and students.', 4, 8],
      ['Event', 'Admission: $12.50', 12.5, 12.5],
      ['Event', 'Prices range from $10 to $30 depending on seating.', 10, 30],
      ['Event', 'Wildeye charges a $5-10 sliding scale cover fee.', 5, 10],
      ['Event', 'Registration fee is 20 dollars.', 20, 20],
      ['Lantern Making Workshop – $15 per person', 'Make a paper lantern.', 15, 15],
      ['Event', 'General Admission / Adult 18-64 $25', 25, 25],
      ['Event', '$10 - $20', 10, 20],
      ['Bouldering', "The Details: <br>Day Pass: $35<br>Shoe Rental: $6 (if you don't have your own)", 35, 35],
      ['Mary Jane', 'MARCH 19 – APRIL 19, 2026 \n$79–$103\n\nhttps://www.seattlerep.org/', 79, 103],
      ['Event', 'Doors: 6:30pm | Show: 7:30pm Tickets: $20-40* advance | $25-40 doors', 20, 40],
    ];
    for (const [title, d, min, max] of cases) {
      const r = prose(d, title);
      assert.deepEqual([r.isFree, r.min, r.max], [false, min, max], `${title} / ${d}`);
      assert.ok(r.note !== null && r.note.length <= 300);
    }
  });
  test('amounts that are not the price of attending', () => {
    for (const d of [
      'Parking is $5 in the garage across the street.',
      'Show your membership card and get $5 off.',
      'Indicate your club membership and receive $5 off admission all day.',
      'Last year we raised $12,000 for the food bank!',
      'Win up to $500 in prizes.',
      'Books by the author will be for sale ($15).',
      'Concessions available: $12 Banh Mi and $4 drinks.',
      'Also check out our 8-week class series at the Rec Center for $120.',
      'The event is sponsored by a $10,000 grant from the county.',
      'Call 415-555-1212 or email us. Room 213.',
      'A $40 optional certificate is available if you wish.',
    ])
      assert.deepEqual(prose(d), { isFree: false, min: null, max: null, note: null }, d);
  });
  test('an amount for something else does not make a free event paid', () => {
    assert.deepEqual(prose('Parking is $5. Admission is free.'), { isFree: true, min: 0, max: 0, note: 'Admission is free.' });
    assert.deepEqual(prose('All are welcome to attend at no cost. The cost for participants wishing to obtain a certification is $30 cash.'), {
      isFree: true,
      min: 0,
      max: 0,
      note: 'All are welcome to attend at no cost.',
    });
  });
  test('a stated price overrides a free-by-default source (a library event with tickets)', () =>
    assert.deepEqual(prose('Author talk and book signing. Tickets are $10.', 'Author Talk', undefined, true), {
      isFree: false,
      min: 10,
      max: 10,
      note: 'Tickets are $10.',
    }));
  test('a price field that says nothing of cost leaves the prose to say it (royal-room "Paid")', () =>
    assert.deepEqual(normalizePrice(p('Paid'), false, { title: 'Show', description: 'Doors: 6:30pm Show: 7:30pm Tickets: $20 advance, $25 doors' }), {
      isFree: false,
      min: 20,
      max: 25,
      note: 'Paid',
    }));
});

describe('free with admission: one meaning (not free, no amount, the text kept)', () => {
  test('the bundled sample\'s JSON-LD: price 0, isAccessibleForFree false, "Free with museum admission" → not free, no amount', () =>
    assert.deepEqual(normalizePrice(p('Free with museum admission', false, 0, 0), false), {
      isFree: false,
      min: null,
      max: null,
      note: 'Free with museum admission',
    }));
  test('the bundled sample\'s JSON-LD: price 0, isAccessibleForFree false, "Free admission" → free', () =>
    assert.deepEqual(normalizePrice(p('Free admission', false, 0, 0), false), { isFree: true, min: 0, max: 0, note: 'Free admission' }));
  test('in prose, and its kin', () => {
    for (const d of ['This event is free with museum admission.', 'Included with general admission.', 'Free w/ paid zoo admission!', '$5 plus admission.'])
      assert.equal(prose(d, 'Exhibit', undefined, true).isFree, false, d);
    assert.deepEqual(prose('Included with general admission.', 'Exhibit', undefined, true), {
      isFree: false,
      min: null,
      max: null,
      note: 'Included with general admission.',
    });
  });
  test('a stated admission amount is its price: "Free with admission ($12 adults)" → 12', () =>
    assert.deepEqual(normalizePrice(p('Free with admission ($12 adults)'), false), {
      isFree: false,
      min: 12,
      max: 12,
      note: 'Free with admission ($12 adults)',
    }));
});

// ---------------------------------------------------------------- agreement, for any input

/** What the contract asks of every record: a price known to be zero is free; a free record is priced 0–0 or not at all. */
function assertAgree(r: { isFree: boolean; min: number | null; max: number | null }, where: string): void {
  assert.equal(r.min === null, r.max === null, `${where}: min and max are both known or both unknown`);
  if (r.min !== null && r.max !== null) {
    assert.ok(Number.isFinite(r.min) && r.min >= 0 && r.min <= r.max && Number.isFinite(r.max), `${where}: ${r.min}–${r.max}`);
    assert.equal(r.isFree, r.max === 0, `${where}: is_free ${r.isFree} beside ${r.min}–${r.max}`);
  }
}

const FRAGMENTS = [
  'Free',
  'FREE!',
  'free admission',
  'Free with museum admission',
  'free for members',
  'Kids 12 and under free',
  'no charge',
  '$0',
  '$0.00',
  '$25 admission',
  'Tickets are $15 at the door',
  '$36 members, $46 non-members',
  '$10-$20',
  '$5 off',
  'Parking $5',
  'suggested donation',
  'FREE Wednesdays',
  'Cost: ',
  'Price: ',
  '<br>',
  '<p>',
  '</p>',
  '. ',
  '! ',
  ', ',
  ' ',
  '0',
  '15',
  '-',
  'to',
  'dollars',
  'first Thursday',
  'included with admission',
];
const phrase = fc.oneof(
  fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 8 }).map((a) => a.join('')),
  fc.string({ maxLength: 60 }),
);
const amount = fc.option(fc.oneof(fc.constantFrom(0, 5, 12.5), fc.double({ min: -10, max: 1e6 }), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY)), {
  nil: null,
});
const BUDGET_MS = 3_000;

describe('is_free and price agree for any input (fast-check)', () => {
  test('normalizePrice', () => {
    fc.assert(
      fc.property(
        fc.option(phrase, { nil: null }),
        amount,
        amount,
        fc.option(fc.boolean(), { nil: null }),
        fc.boolean(),
        phrase,
        fc.option(phrase, { nil: null }),
        fc.option(fc.integer({ min: 1, max: 7 }), { nil: undefined }),
        (priceText, priceMin, priceMax, isFree, byDefault, title, description, weekday) => {
          assertAgree(
            normalizePrice({ priceText, priceMin, priceMax, isFree }, byDefault, { title, description, weekday }),
            JSON.stringify({ priceText, priceMin, priceMax, isFree, title, description }),
          );
        },
      ),
      { interruptAfterTimeLimit: BUDGET_MS, numRuns: 100_000 },
    );
  });
  test('a merge of copies that agree agrees (mergeGroup, which both the CLI and the DuckDB build use)', () => {
    const copy = fc.record({
      priceText: fc.option(phrase, { nil: null }),
      priceMin: amount,
      priceMax: amount,
      isFree: fc.option(fc.boolean(), { nil: null }),
      byDefault: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(copy, { minLength: 2, maxLength: 4 }), (copies) => {
        const rows = copies.map((c, i) => {
          const price = normalizePrice(c, c.byDefault);
          return row(`bsc_evt_${i}`, i, price);
        });
        const m = mergeGroup(rows);
        assertAgree({ isFree: m.is_free, min: m.price_min, max: m.price_max }, JSON.stringify(copies));
      }),
      { interruptAfterTimeLimit: BUDGET_MS, numRuns: 100_000 },
    );
  });
});

function row(id: string, rank: number, price: Price): EventRow {
  const r: Partial<EventRow> = {
    id,
    title: 'Storytime',
    description: null,
    summary: null,
    start_datetime: '2026-12-01T10:00:00-08:00',
    end_datetime: null,
    start_ms: 0,
    end_ms: 0,
    venue_key: 'v',
    venue_name: 'Main Library',
    venue_address: '100 Larkin St, San Francisco, CA 94102',
    venue_city: 'San Francisco',
    venue_lat: 37.78,
    venue_lng: -122.42,
    organizer: null,
    organizer_url: null,
    categories: [],
    tags: [],
    image_url: null,
    is_free: price.isFree,
    price_min: price.min,
    price_max: price.max,
    price_note: price.note,
    ticket_url: null,
    source: null,
    destination: 'sf',
    age_min_months: null,
    age_max_months: null,
    is_canceled: false,
    city_key: 'san francisco',
    search_text: '',
    source_id: `s${rank}`,
    source_rank: rank,
  };
  return r as EventRow;
}

describe('mergeGroup keeps is_free and price together', () => {
  const FREE_ZERO = { isFree: true, min: 0, max: 0, note: 'Free' };
  const PAID = { isFree: false, min: 10, max: 20, note: '$10–$20' };
  const NOTHING_FREE = { isFree: true, min: null, max: null, note: null };
  const NOTHING_PAID = { isFree: false, min: null, max: null, note: null };
  const COND = { isFree: false, min: null, max: null, note: 'Free with museum admission' };
  const merged = (a: Price, b: Price) => {
    const m = mergeGroup([row('bsc_evt_a', 0, a), row('bsc_evt_b', 1, b)]);
    return { isFree: m.is_free, min: m.price_min, max: m.price_max, note: m.price_note };
  };
  test("a primary that states no price takes the other copy's price and is_free together", () => {
    assert.deepEqual(merged(NOTHING_PAID, FREE_ZERO), FREE_ZERO);
    assert.deepEqual(merged(NOTHING_FREE, PAID), PAID);
  });
  test('a primary that states a price keeps its is_free; a copy that disagrees fills nothing', () => {
    assert.deepEqual(merged(COND, FREE_ZERO), COND);
    assert.deepEqual(merged(FREE_ZERO, PAID), FREE_ZERO);
    assert.deepEqual(merged({ isFree: false, min: null, max: null, note: 'Tickets at the door' }, PAID), {
      isFree: false,
      min: 10,
      max: 20,
      note: 'Tickets at the door',
    });
  });
});
