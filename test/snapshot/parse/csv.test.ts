import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseCsv } from '../../../snapshot/parse/csv.ts';
import { FeedFormatError } from '../../../snapshot/parse/types.ts';
import { byTitle, fixture, wall, WINDOW } from './helpers.ts';

const spreadsheet = fixture('parks-spreadsheet.csv');

describe('parseCsv: spreadsheet export with Date + Time columns (Excel "CSV UTF-8")', () => {
  test('the fixture really starts with a UTF-8 BOM, and the first header is still recognized', async () => {
    assert.equal(spreadsheet.charCodeAt(0), 0xfeff);
    const { events } = await parseCsv(spreadsheet, { window: WINDOW });
    assert.ok(events.length > 0);
  });

  test('quoted fields with commas and newlines stay one field; whitespace around fields is trimmed', async () => {
    const { events } = await parseCsv(spreadsheet, { window: WINDOW });
    const story = byTitle(events, 'Toddler Storytime, Songs & Rhymes');
    assert.match(story.description ?? '', /^Stories, songs and rhymes\.\r?\nBring a blanket for your little one!$/);
    byTitle(events, 'Holiday Sing-Along');
  });

  test('"10:30 AM - 11:15 AM" with "11/24/2026" → start and end in Los Angeles time', async () => {
    const story = byTitle((await parseCsv(spreadsheet, { window: WINDOW })).events, 'Toddler Storytime, Songs & Rhymes');
    assert.equal(story.start.at.toMillis(), wall('2026-11-24T10:30'));
    assert.equal(story.end?.at.toMillis(), wall('2026-11-24T11:15'));
    assert.equal(story.start.dateOnly, false);
  });

  test('a long-form date with an en-dash range, and a "to" range', async () => {
    const { events } = await parseCsv(spreadsheet, { window: WINDOW });
    const sing = byTitle(events, 'Holiday Sing-Along');
    assert.equal(sing.start.at.toMillis(), wall('2026-12-01T18:00'));
    assert.equal(sing.end?.at.toMillis(), wall('2026-12-01T19:30'));
    const ginger = byTitle(events, 'Gingerbread Houses');
    assert.equal(ginger.start.at.toMillis(), wall('2026-12-12T13:00'));
    assert.equal(ginger.end?.at.toMillis(), wall('2026-12-12T15:00'));
  });

  test('a single time gives a start and no end', async () => {
    const pj = byTitle((await parseCsv(spreadsheet, { window: WINDOW })).events, 'Polar Express Pajama Story Night');
    assert.equal(pj.start.at.toMillis(), wall('2026-12-17T18:30'));
    assert.equal(pj.end, null);
  });

  test('Location, Address and City join into location; Ages and Cost map to ages and priceText', async () => {
    const story = byTitle((await parseCsv(spreadsheet, { window: WINDOW })).events, 'Toddler Storytime, Songs & Rhymes');
    assert.equal(story.location, 'Albany Library, 1247 Marin Ave, Community Room, Albany');
    assert.equal(story.ages, '0-3 yrs');
    assert.equal(story.priceText, 'Free');
    assert.equal(byTitle((await parseCsv(spreadsheet, { window: WINDOW })).events, 'Gingerbread Houses').priceText, '$15 ($10 residents)');
  });

  test('Status "Cancelled" / "CANCELED" → cancelled: true; empty status → false', async () => {
    const { events } = await parseCsv(spreadsheet, { window: WINDOW });
    assert.equal(byTitle(events, 'Gingerbread Houses').cancelled, true);
    assert.equal(byTitle(events, 'Polar Express Pajama Story Night').cancelled, true);
    assert.equal(byTitle(events, 'Toddler Storytime, Songs & Rhymes').cancelled, false);
  });

  test('a row whose Date is "TBD" is counted in noStart', async () => {
    const { events, noStart } = await parseCsv(spreadsheet, { window: WINDOW });
    assert.equal(noStart, 1);
    assert.equal(events.length, 4);
    assert.ok(!events.some((e) => e.title === 'Spring Egg Hunt'));
  });
});

describe('parseCsv: tidy export with start/end "yyyy-MM-dd HH:mm"', () => {
  test('start/end are Los Angeles wall-clock; id, category (; or |), url, free, lat/lng map', async () => {
    const { events } = await parseCsv(fixture('tidy-export.csv'), { window: WINDOW });
    const birds = byTitle(events, 'Winter Bird Count for Kids');
    assert.equal(birds.uid, 'evt-301');
    assert.equal(birds.start.at.toMillis(), wall('2026-12-19T08:00'));
    assert.equal(birds.end?.at.toMillis(), wall('2026-12-19T11:00'));
    assert.equal(birds.location, 'Coyote Hills Regional Park, 8000 Patterson Ranch Rd, Fremont');
    assert.deepEqual(birds.categories, ['Nature', 'Outdoors']);
    assert.equal(birds.url, 'https://ebparks.example.org/events/301');
    assert.equal(birds.isFree, true);
    assert.equal(birds.lat, 37.5536);
    assert.equal(birds.lng, -122.0922);
    const tide = byTitle(events, 'Tide Pool Explorers');
    assert.equal(tide.start.at.toMillis(), wall('2027-01-16T09:30'));
    assert.deepEqual(tide.categories, ['Nature', 'Science']);
    assert.equal(tide.isFree, false);
  });

  test('a row whose start is not a date is counted in noStart', async () => {
    const { events, noStart } = await parseCsv(fixture('tidy-export.csv'), { window: WINDOW });
    assert.equal(noStart, 1);
    assert.deepEqual(
      events.map((e) => e.uid),
      ['evt-301', 'evt-302'],
    );
  });
});

describe('parseCsv: custom headers via csvColumns', () => {
  const custom = fixture('custom-headers.csv');

  test('{ title: "Program", start: "Begins" } picks those columns (not "Name", which the defaults would take)', async () => {
    const { events, noStart } = await parseCsv(custom, { window: WINDOW, csvColumns: { title: 'Program', start: 'Begins' } });
    assert.equal(noStart, 0);
    assert.deepEqual(
      events.map((e) => e.title),
      ['Preschool Soccer Sampler', 'Parent & Me Tumbling'],
    );
    const soccer = events[0]!;
    assert.equal(soccer.start.at.toMillis(), wall('2026-12-05T09:00'));
    assert.equal(soccer.end?.at.toMillis(), wall('2026-12-05T09:45'), 'unmapped fields keep their default headers (Ends)');
    assert.equal(soccer.location, 'Memorial Park Field 2');
    assert.equal(soccer.priceText, '$35.00');
  });

  test('without the mapping the same file has no start column and throws FeedFormatError', async () => {
    await assert.rejects(parseCsv(custom, { window: WINDOW }), FeedFormatError);
  });
});

describe('parseCsv: documents that are not event CSVs', () => {
  test('no title or start column → FeedFormatError naming the headers', async () => {
    const facilities = 'Facility,Street Address,Phone,Hours\r\nMemorial Park Clubhouse,1325 Portland Ave,(510) 524-9283,9-5\r\n';
    await assert.rejects(parseCsv(facilities, { window: WINDOW }), (err: unknown) => {
      assert.ok(err instanceof FeedFormatError);
      for (const h of ['Facility', 'Street Address', 'Phone', 'Hours']) assert.match(err.message, new RegExp(h));
      return true;
    });
  });

  test('a title but neither a start nor a date column → FeedFormatError', async () => {
    await assert.rejects(parseCsv('Title,Location\r\nStorytime,Main Library\r\n', { window: WINDOW }), FeedFormatError);
  });

  test('HTML, JSON and iCalendar bodies throw FeedFormatError', async () => {
    const bodies = {
      html: '<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body><form action="/login"></form></body></html>',
      htmlWithBom: '\uFEFF<html><body>Service Unavailable</body></html>',
      json: '{"events":[{"title":"Storytime","start":"2026-12-01T10:00:00-08:00"}]}',
      jsonArray: '[\n  {\n    "title": "Storytime",\n    "start": "2026-12-01T10:00"\n  }\n]\n',
      ical: fixture('libcal-events.ics'),
    };
    for (const [name, body] of Object.entries(bodies)) await assert.rejects(parseCsv(body, { window: WINDOW }), FeedFormatError, name);
  });

  test('a header-only file returns zero events', async () => {
    assert.deepEqual(await parseCsv('Event Name,Date,Time,Location\r\n', { window: WINDOW }), { events: [], noStart: 0 });
  });
});

describe('parseCsv: malformed and unusual input', () => {
  test('an hour without minutes ("6 PM - 7:30 PM") is a readable time', async () => {
    const csv = 'Event Name,Date,Time,Location\r\nFamily Craft Night,11/25/2026,6 PM - 7:30 PM,Albany Library\r\n';
    const { events, noStart } = await parseCsv(csv, { window: WINDOW });
    assert.equal(noStart, 0);
    assert.equal(events[0]?.start.at.toMillis(), wall('2026-11-25T18:00'));
    assert.equal(events[0]?.end?.at.toMillis(), wall('2026-11-25T19:30'));
  });

  test('a readable Date with Time "All Day" is an all-day event, not a missing start', async () => {
    const csv = 'Event Name,Date,Time,Location\r\nHoliday Lights Walk,12/5/2026,All Day,Jack London Square\r\n';
    const { events, noStart } = await parseCsv(csv, { window: WINDOW });
    assert.equal(noStart, 0);
    assert.equal(events[0]?.start.dateOnly, true);
    assert.equal(events[0]?.start.at.toMillis(), wall('2026-12-05T00:00'));
  });
});

// scoutbook-troop485.csv: a Scoutbook iCalendar export flattened to CSV, with the iCal property
// names as headers (Troop 485, Westlake Village, CA).
describe('parseCsv: iCalendar-style headers (dtstart, dtend, summary)', () => {
  const scoutbook = `dtstart,dtend,dtstamp,organizer,uid,attendee,created,description,last-modified,location,sequence,status,summary,transp
"2022-05-20T16:00:00","2022-05-21T16:00:00","2022-07-19T17:18:53Z","MAILTO:jngsolutions@gmail.com","4332656@scoutbook.scouting.org","","","","","Westminster Presbyterian Church","","","Welding Merit Badge",""
"2022-06-06T19:00:00","2022-06-06T20:30:00","2022-07-19T17:18:53Z","MAILTO:jngsolutions@gmail.com","4332636@scoutbook.scouting.org","","","Camp prep. What to expect. What to bring. When to meet.","","Westminster Presbyterian Church","","","Weekly Troop Meeting",""
`;

  test('summary is the title, dtstart/dtend the times, description and location as named', async () => {
    const { events, noStart } = await parseCsv(scoutbook, { window: WINDOW });
    assert.equal(noStart, 0);
    assert.deepEqual(
      events.map((e) => e.title),
      ['Welding Merit Badge', 'Weekly Troop Meeting'],
    );
    const meeting = events[1]!;
    assert.equal(meeting.uid, '4332636@scoutbook.scouting.org');
    assert.equal(meeting.start.at.toMillis(), wall('2022-06-06T19:00'));
    assert.equal(meeting.end?.at.toMillis(), wall('2022-06-06T20:30'));
    assert.equal(meeting.description, 'Camp prep. What to expect. What to bring. When to meet.');
    assert.equal(meeting.location, 'Westminster Presbyterian Church');
    assert.equal(meeting.summary, null, 'the summary column is the title, not also a teaser');
  });

  test('an ORGANIZER that is a mailto: address is no organizer name (an address is not ours to republish)', async () => {
    const { events } = await parseCsv(scoutbook, { window: WINDOW });
    assert.ok(events.every((e) => e.organizerName === null));
  });

  test('a file with both "title" and "summary" headers keeps summary as the teaser', async () => {
    const csv = 'title,summary,dtstart\r\nStorytime,Songs and stories,2026-11-24T10:30:00\r\n';
    const { events } = await parseCsv(csv, { window: WINDOW });
    assert.equal(events[0]?.title, 'Storytime');
    assert.equal(events[0]?.summary, 'Songs and stories');
  });
});

// missingmaps-mapathons.csv: columns latitude, longitude, date, flag, title, place_name, place_url,
// time_string, signup_url. Times are written every which way.
describe('parseCsv: a date column and a free-form time column (MissingMaps)', () => {
  const header = 'latitude,longitude,date,flag,title,place_name,place_url,time_string,signup_url\n';
  const rows = [
    '51.52168,-0.10777,2014-07-29,gb,Missing Maps Party,MSF UK HQ,http://osm.org/go/euu4tD0_1?m=,18:00-20:30,http://www.eventbrite.co.uk/e/missing-maps-july-mapathon-tickets-12317087741',
    '38.9,-77.0,2015-01-27,us,Missing Maps Mapathon at American Red Cross,American Red Cross,,6pm-9pm,',
    '48.2,16.3,2015-11-17,at,GIS Day Mapathon,Uni Wien,,9:30-16:30,',
    '40.4,-3.7,2017-04-29,es,Mapatón,Madrid,,10:00-4:00,',
    '-23.5,-46.6,2015-11-19,br,Mapathon São Paulo,USP,,18:00 BRT,',
    '52.5,13.4,2015-11-18,de,Mapathon Berlin,Berlin,,TBD,',
  ];
  const csv = header + rows.join('\n') + '\n';
  const opts = { window: WINDOW, csvColumns: { time: 'time_string', location: 'place_name' } };

  test('every row with a date is an event, whatever its time says', async () => {
    const { events, noStart } = await parseCsv(csv, opts);
    assert.equal(noStart, 0);
    assert.equal(events.length, rows.length);
  });

  test('"18:00-20:30", "6pm-9pm", "9:30-16:30" and "10:00-4:00" read as times', async () => {
    const { events } = await parseCsv(csv, opts);
    const at = (title: string) => byTitle(events, title);
    assert.equal(at('Missing Maps Party').start.at.toMillis(), wall('2014-07-29T18:00'));
    assert.equal(at('Missing Maps Party').end?.at.toMillis(), wall('2014-07-29T20:30'));
    assert.equal(at('Missing Maps Mapathon at American Red Cross').start.at.toMillis(), wall('2015-01-27T18:00'));
    assert.equal(at('Missing Maps Mapathon at American Red Cross').end?.at.toMillis(), wall('2015-01-27T21:00'));
    assert.equal(at('GIS Day Mapathon').start.at.toMillis(), wall('2015-11-17T09:30'));
    assert.equal(at('GIS Day Mapathon').end?.at.toMillis(), wall('2015-11-17T16:30'));
    assert.equal(at('Mapatón').end?.at.toMillis(), wall('2017-04-29T16:00'));
    assert.equal(at('Missing Maps Party').location, 'MSF UK HQ');
  });

  test('"18:00 BRT" and "TBD" do not read: the row stays, all day on its date', async () => {
    const { events } = await parseCsv(csv, opts);
    for (const [title, day] of [
      ['Mapathon São Paulo', '2015-11-19'],
      ['Mapathon Berlin', '2015-11-18'],
    ] as const) {
      const e = byTitle(events, title);
      assert.equal(e.start.dateOnly, true, title);
      assert.equal(e.start.at.toMillis(), wall(`${day}T00:00`));
      assert.equal(e.end, null);
    }
  });

  test('a date mapped as the start column takes the time column too (start=date,time=time_string)', async () => {
    const { events } = await parseCsv(csv, { window: WINDOW, csvColumns: { start: 'date', time: 'time_string' } });
    assert.equal(byTitle(events, 'Missing Maps Mapathon at American Red Cross').start.at.toMillis(), wall('2015-01-27T18:00'));
    assert.equal(byTitle(events, 'Mapathon Berlin').start.dateOnly, true);
  });

  test('a row whose date does not read ("2017-03-2") is skipped and named in noStartItems (by 0-based data row)', async () => {
    const bad = await parseCsv(
      `${header}${rows[0]}\n40.42820,-104.69075,2017-03-2,us,"UNC Humanitarian Mapathon","Weldwerks Brewing, Greeley Colorado",,18:00-20:00,\n`,
      opts,
    );
    assert.equal(bad.noStart, 1);
    assert.deepEqual(bad.noStartItems, [{ position: 1, uid: null, title: 'UNC Humanitarian Mapathon' }]);
  });
});
