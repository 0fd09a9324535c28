import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { adultSigns, audienceField, audienceLabel, speaksToChildren } from '../../../snapshot/normalize/audience.ts';
import { parseAges } from '../../../snapshot/normalize/ages.ts';
import { parseICal } from '../../../snapshot/parse/ical.ts';
import { WINDOW } from '../parse/helpers.ts';

// Texts are folded (lower case, no accents) before they reach audience.ts, as parseAges does.
describe('audienceField: a whole field that is a checklist', () => {
  test('the union of its groups; "All" or "Family" anywhere is all ages', () => {
    // seattle-gov-citywide.trumba.ics, X-TRUMBA-CUSTOMFIELD;NAME="Audience"
    assert.deepEqual(audienceField('adults,all,children,family,pets,senior,special needs,teen'), { kind: 'all' });
    assert.deepEqual(audienceField('children,family'), { kind: 'all' });
    assert.deepEqual(audienceField('adults,senior,teen'), { kind: 'years', lo: 13, hi: 18 });
    assert.deepEqual(audienceField('adults,children,teen'), { kind: 'years', lo: 0, hi: 18 });
    assert.deepEqual(audienceField('adults'), { kind: 'adults' });
    assert.deepEqual(audienceField('adults,senior'), { kind: 'adults' });
  });

  test('only groups: a field with anything else is not a checklist', () => {
    assert.equal(audienceField('3-5 years'), null);
    assert.equal(audienceField('adults and teens who like chess'), null);
    assert.equal(audienceField('pets'), null);
  });
});

describe('audienceLabel: "Audience: …" printed into a description', () => {
  test('stops at the next label', () => {
    // seattle-gov-citywide.trumba.ics descriptions print every custom field as "Name: value<br>".
    assert.deepEqual(audienceLabel('contact email: medic2@seattle.gov audience: all contact: medic2@seattle.gov'), { kind: 'all' });
    assert.deepEqual(audienceLabel('audience: adults,senior,teen pre-register: yes cost: free'), { kind: 'years', lo: 13, hi: 18 });
    assert.deepEqual(audienceLabel('audience: adults sponsoring organization: mockingbird comedy'), { kind: 'adults' });
  });

  test('"Age range: All Ages" outweighs a price tier (knco-nevada-county.trumba-rss.xml)', () => {
    const text =
      'price: adults: $15, kids 6-12: $10, kids 5 and under: free online ticket: tickets available and donations welcomed! age range: all ages event details: get ready for a delicious evening';
    assert.deepEqual(audienceLabel(text), { kind: 'all' });
    assert.deepEqual(parseAges(null, 'NSJ Community Event | Spaghetti Dinner Fundraiser and Raffle!', text), { kind: 'all' });
  });

  test('a stated age is finer than a labelled group (knco-nevada-county.trumba-rss.xml, The Curious Forge)', () => {
    assert.deepEqual(
      parseAges(
        null,
        'Woodshop Adventures – Youth Fall Break Camp',
        'every child can feel valued and supported. Ages 8 to 11 4-Day Youth Maker XD Fall Break Camp | 3 hours a day … Age range: Children Event details: This class is perfect for kids',
      ),
      { kind: 'range', range: { min_months: 96, max_months: 143 } },
    );
    assert.deepEqual(
      parseAges(
        null,
        'Glassblowing for Beginners – Make a Paperweight',
        'a similar replacement piece from our stock of handblown glass items. Ages 14+ Price: $180 … Age range: Adult Event details: Glassblowing for Beginners Level 1',
      ),
      { kind: 'range', range: { min_months: 168, max_months: 227 } },
    );
    // With no stated age, the labelled group decides.
    assert.deepEqual(
      parseAges(
        null,
        'Paint and Sip with Alan Rollins',
        'Online ticket: 098e3585-989b-4725-b759-b32e5ff78dab.paylinks.godaddy.com… Age range: Adult Event details: Join us for an evening of creativity and laughter as Alan',
      ),
      { kind: 'adults' },
    );
  });

  test('no label, no list', () => {
    assert.equal(audienceLabel('a calm storytime for toddlers'), null);
  });
});

describe('adultSigns', () => {
  test('a stated adult minimum, and where it is stated', () => {
    assert.equal(adultSigns(null, 'after dark (21+ only)', null).strong, 'head');
    // hidden-hall.jsonld.html
    assert.equal(adultSigns(null, 'bonkonomics w/ montlake traffic, wendy darling', '7:30pm doors 8:00pm show 21+').strong, 'body');
    assert.equal(adultSigns(null, 'trivia', 'you must be 21 to play').strong, 'body');
    assert.equal(adultSigns(null, 'trivia', 'players 21 and over').strong, 'body');
  });

  test('numbers that are not a minimum age', () => {
    // hidden-hall.jsonld.html: "At 21 years of age, Grammy nominated Luc Bradford …" is about the artist.
    assert.equal(adultSigns(null, 'ford. plus special guests', 'at 21 years of age, grammy nominated luc bradford').strong, null);
    assert.equal(adultSigns(null, 'toddler art', 'for toddlers 18+ months').strong, null);
    assert.equal(adultSigns(null, 'anniversary', 'celebrating 21+ years in wallingford').strong, null);
  });

  test('bars and tastings are weak signs; a "salad bar" or "monkey bars" is none', () => {
    assert.equal(adultSigns(null, "russell's tavern 12th anniversary", null).weak, true);
    assert.equal(adultSigns(null, 'an afternoon of greek wine, music, and history', 'wine tasting and live music').weak, true);
    assert.equal(adultSigns(null, 'playground day', 'slides and monkey bars, then the salad bar').weak, false);
    assert.equal(adultSigns(null, 'bar mitzvah celebration', null).weak, false);
    assert.equal(adultSigns(null, 'young adult book club', null).weak, false);
  });

  test('a taproom is a weak sign by evening, not for its market by day nor on a morning that names no drink', () => {
    // ravenna-brewing-seattle (gold): the place is the location and the organizer, the hour is local.
    const place = 'ravenna brewing company, 5408 26th ave ne, seattle, wa, 98105';
    assert.equal(adultSigns(null, 'head in the clouds trivia night!', null, place, 19).weak, true);
    assert.equal(adultSigns(null, 'veggie, herb, and flower start sale with ravenna gardens', null, place, 11).weak, false);
    assert.equal(adultSigns(null, 'veggie, herb, and flower start sale with ravenna gardens', null, place, 19).weak, true);
    assert.equal(adultSigns(null, 'sunday morning stretch', null, place, 9).weak, false);
    assert.equal(adultSigns(null, 'sunday morning stretch', null, place, null).weak, true);
  });

  test('children are named by plural or group words, not by lyrics or stage names', () => {
    assert.equal(speaksToChildren("21+ it's a love story, baby"), false);
    assert.equal(speaksToChildren('plus dj kid hops (kexp)'), false);
    assert.equal(speaksToChildren('kid-friendly activities for families'), true);
  });

  test('children\'s fare and other languages name children; "adults of all ages" does not', () => {
    assert.equal(speaksToChildren('cartoon happy hour'), true);
    assert.equal(speaksToChildren('saturday puppet show'), true);
    assert.equal(speaksToChildren('适合0-5岁的孩子和家长'), true);
    assert.equal(speaksToChildren('cuentos para bebes'), true);
    assert.equal(speaksToChildren('adults of all ages welcome'), false);
    assert.equal(speaksToChildren('people of all ages welcome'), true);
  });
});

describe('Trumba "Audience" custom field reaches normalization', () => {
  // seattle-gov-citywide.trumba.ics, "Comedy Battle Royale - Ballard" (a weekly show at a pub), trimmed.
  const ics = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Trumba Corporation//Trumba Calendar Services 0.11.7875//EN',
    'BEGIN:VEVENT',
    'UID:http://uid.trumba.com/event/190000001',
    'DTSTART;TZID=America/Los_Angeles:20261125T200000',
    'DTEND;TZID=America/Los_Angeles:20261125T220000',
    'SUMMARY:Comedy Battle Royale - Ballard',
    "DESCRIPTION:Come watch 20-plus of Seattle's best comedians compete for cash prizes weekly at one of Ballard's most popular destinations\\, Kangaroo & Kiwi.",
    'X-TRUMBA-CUSTOMFIELD;NAME="Audience";ID=10952;TYPE=CustomAsset:Adults',
    'END:VEVENT',
    'BEGIN:VEVENT',
    'UID:http://uid.trumba.com/event/190000002',
    'DTSTART;TZID=America/Los_Angeles:20261126T090000',
    'SUMMARY:Green Lake Litter Patrol',
    'DESCRIPTION:Please dress for the weather & 2+ mile walk.',
    'X-TRUMBA-CUSTOMFIELD;NAME="Audience";ID=10952;TYPE=CustomAsset:Adults\\,All\\,Children\\,Family\\,Pets\\,Senior\\,Special Needs\\,Teen',
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
  const { events } = parseICal(ics, { window: WINDOW });

  test('as the ages field, unescaped', () => {
    assert.deepEqual(
      events.map((e) => e.ages),
      ['Adults', 'Adults,All,Children,Family,Pets,Senior,Special Needs,Teen'],
    );
  });

  test('an adults-only audience is not a family event; a list with "All" is all ages', () => {
    assert.deepEqual(
      events.map((e) => parseAges(e.ages, e.title, e.description)),
      [{ kind: 'adults' }, { kind: 'all' }],
    );
  });
});
