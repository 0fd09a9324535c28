// Notices posted as events (normalize/kind.ts): each class in the shapes real calendars give it, and
// beside each the event titles that share its words and must stay events. Precision first: a family
// event dropped costs more than a closure served.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bundledGazetteer } from '../../../snapshot/gazetteer.ts';
import { noticeKind, type NoticeKind } from '../../../snapshot/normalize/kind.ts';
import { normalizeAll, sourceContext } from '../../../snapshot/normalize/event.ts';
import { parseCsv } from '../../../snapshot/parse/csv.ts';
import { parseRegistry } from '../../../snapshot/registry.ts';
import { WINDOW } from '../parse/helpers.ts';

const notices: Readonly<Record<NoticeKind, readonly (string | readonly [string, string])[]>> = {
  closure: [
    'Library Closed for Memorial Day',
    'CLOSED Sunday and Monday MEMORIAL DAY',
    'Closed for Holiday',
    'Closed',
    'CLOSED - Thanksgiving',
    'Christmas Day - Closed',
    'Thanksgiving (Closed)',
    'Closed: Labor Day',
    'Closed to the public',
    'Closed @ 3PM for private event',
    'All Library Locations Closed',
    'Main Branch is closed today',
    'Happy Turkey Day- We are closed.',
    'New Years Eve. We are closed at 9 PM.',
    'Museum Closed for Installation',
    'Federal Holiday - Offices Closed',
    'Closing Early',
    'Library closes early at 5 pm',
    'Early Closure: Staff Training',
    'Delayed Opening – Staff Meeting',
    'No Storytime Today',
    'No Story Time this week',
    'Winter Break - No School',
    'No Pack Meeting - Thanksgiving',
    'Library Closed - No Storytime',
    'Northbound I-5 Two-Lane Closure',
    'Full weekend closure of northbound I-5, from I-90 to NE 45th St',
    'Trail Closure',
    'Memorial Day Weekend – Closed Monday',
  ],
  private: [
    'Private Rental Event',
    'Private Event',
    'Private event – venue closed to the public',
    'Private Party',
    'Private Booking',
    'Closed for a Private Event',
    'Reserved for private party',
    'Smith Wedding - Private',
    'Gym Rental',
    'Reserved',
  ],
  deadline: [
    '2026-2027 Labor Studies Scholarship Application Now Open',
    'Registration Deadline',
    'Early Bird Registration Deadline for Summer Camp',
    'Applications Due',
    'Summer Camp Applications Open',
    'Registration Opens for Fall Classes',
    'Last day to drop classes',
    'Now accepting applications: Teen Advisory Board',
    'Call for Artists: Summer Mural Project',
    'Apply by March 1',
    'PSE Coal Plant comment deadline',
  ],
  digest: ['ArtSci Roundup: April', 'Weekly Newsletter', 'Parks Roundup: Week of May 4', 'Monthly E-News'],
  hours: [
    'UW Surplus Public Store',
    'UW Surplus Online Store',
    'Holiday Hours',
    'Limited Store Hours',
    'Summer Hours Begin',
    'Hours of Operation',
    'Thanksgiving Hours',
    'Christmas Eve - Open 10am-6pm',
    'Museum Store',
  ],
  campaign: ['GiveBIG 2026', 'Give Big!', '#GivingTuesday', 'Giving Tuesday 2025'],
  placeholder: ['Test', 'test event 2', 'TBA', 'Placeholder', 'Do not delete', ['Orientation Test', '']],
  holiday: [
    'City Holiday: Memorial Day',
    "Germany: Mother's Day [Not a public holiday]",
    'Quarter Break - Summer 2026',
    ['Memorial Day', 'No classes. Most University offices and buildings are closed.'],
    ['Independence Day (Observed)', 'No classes. Most University offices and buildings are closed.'],
    ['Thanksgiving Break', 'All branches will be closed Thursday and Friday.'],
  ],
};

// Events whose titles share a notice's words: each must stay an event.
const events: readonly (string | readonly [string, string])[] = [
  // closed, closing, closure
  'Closed Captioned Screening: Moana',
  'Open-captioned and closed-captioned performance',
  'Behind Closed Doors: A Museum Tour',
  'Closing Reception: Young Artists Show',
  'Closing Night of The Nutcracker',
  'Museum closed: members-only behind-the-scenes tour',
  'Finding Closure: A Grief Support Workshop',
  'Road Closure Parade Route: Lunar New Year Parade',
  'After Hours at the Academy',
  'Sensory-Friendly Morning',
  // "no …" programs
  'No School Day Camp',
  'No-School Day Program: Robots',
  'No Kings, no patriarchs — are we making progress?',
  'No Strings Attached Puppet Show',
  // private
  'Private: Founders & Funders — Candle Atelier Night',
  'Private Lessons Showcase Recital',
  'Finnish Red Cross Missing Maps Mapathon - FULLY BOOKED!',
  'Reservations Recommended: Family Tea Party',
  // applying, registering
  'EMBA Online Application Workshop',
  'Resume & Application Information Session',
  'Online Job Applications',
  'FAFSA Help: Deadline is near',
  'Wallingford Parade Registration and Lineup',
  'Tax Help Drop-In (filing deadline April 15)',
  'Scholarship Application Workshop for Teens',
  'Summer Reading Kickoff & Registration Opens',
  'Deadline (film screening)',
  'Call for Volunteers: Beach Cleanup',
  'Art Show: Closed on Mondays',
  'Park Closed to Cars for Sunday Streets',
  'Schools Closed – Camp Day at the Rec Center',
  'Closed Session',
  // digests, stores, hours
  'Reptile Roundup',
  'Pendleton Round-Up Rodeo',
  'Office Hours with Department of Neighborhoods',
  'Teaching Technologies Office Hours',
  'Legal Help Office Hours',
  'Open Adoption Hours',
  'Sensory-Friendly Hours',
  'Holiday Gift Shop for Kids',
  'Pop-Up Book Shop',
  "Santa's Workshop",
  'Store',
  'Holiday Market - Open 10am-4pm',
  'Record Store Day',
  // giving, tests
  '#GivingTuesday special mapathon',
  'Community Free Giving Day (aka Buy Nothing Day)',
  ['Orientation Test', 'New volunteers: an hour of orientation, then a practice run.'],
  'SAT Practice Test',
  'Hearing Test',
  'Taste Test',
  // holidays named by events
  'Holiday Bazaar 2025 - Pack 149',
  'Juneteenth Festival',
  ['Juneteenth', 'Music, food and games for the whole family at the park.'],
  'Memorial Day Parade',
  'Spring Break: Lego',
  'Spring Break Camp',
  'Winter Holiday Sing-Along',
  'Thanksgiving Gratitude Crafts',
  // ordinary events
  'Family Storytime',
  'Toddler Time',
  'Grand Opening Celebration',
  'Open House',
  'Open Studio',
];

const split = (c: string | readonly [string, string]): [string, string | null] => (typeof c === 'string' ? [c, null] : [c[0], c[1]]);

describe('noticeKind: notices posted as events', () => {
  for (const [kind, cases] of Object.entries(notices)) {
    for (const c of cases) {
      const [title, description] = split(c);
      test(`${kind}: ${title}`, () => assert.equal(noticeKind(title, description), kind));
    }
  }
});

describe("noticeKind: events that share a notice's words", () => {
  for (const c of events) {
    const [title, description] = split(c);
    test(title, () => assert.equal(noticeKind(title, description), null));
  }
  test('a bare holiday name with nothing said is not read as a closure', () => assert.equal(noticeKind('Memorial Day', null), null));
});

describe('normalizeAll: a notice is dropped as not_an_event, a cancelled event is kept', () => {
  const registry = parseRegistry(
    {
      sources: [
        {
          id: 'lib',
          url: 'lib.csv',
          format: 'csv',
          organizer: { name: 'A Library', url: 'https://library.example' },
          default_venue: 'sfpl-main',
          destination: 'san-francisco',
          attribution: 'A Library',
        },
      ],
    },
    '(test)',
  );
  const ctx = sourceContext(registry, registry.sources[0]!, bundledGazetteer(), WINDOW);

  test('closures and private bookings are counted as not_an_event; the storytime and the cancelled meeting stay', async () => {
    const csv = [
      'title,start,description',
      '"Library Closed for Memorial Day",2026-11-16,"All locations are closed."',
      '"Private Rental Event",2026-11-17,',
      '"Family Storytime",2026-11-18,"Stories and songs for ages 2-5."',
      '"Race Equity Advisory Committee Regular Meeting - Canceled",2026-11-18,',
    ].join('\n');
    const { rows, dropped } = normalizeAll((await parseCsv(csv, { window: WINDOW })).events, ctx);
    assert.deepEqual(dropped, { not_an_event: 2 });
    assert.deepEqual(rows.map((r) => [r.title, r.is_canceled]).sort(), [
      ['Family Storytime', false],
      ['Race Equity Advisory Committee Regular Meeting', true],
    ]);
  });
});
