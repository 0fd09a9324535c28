import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DateTime } from 'luxon';
import { buildWindow } from '../../../snapshot/build/build.ts';
import { parseICal } from '../../../snapshot/parse/ical.ts';
import { FeedFormatError, MAX_OCCURRENCES } from '../../../snapshot/parse/types.ts';
import type { ParseWindow } from '../../../snapshot/parse/types.ts';
import type { RawEvent } from '../../../snapshot/types.ts';
import { byTitle, byUid, fixture, NOW, utcIso, wall, WINDOW } from './helpers.ts';
import { ZONE } from '../../../core/zone.ts';

const SERIES_UID = '7kukuqrfedlm2f9t3ri1bshcm3@google.com';
const google = fixture('google-calendar-library.ics');

const cal = (...lines: string[]): string => ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Test//Feed//EN', ...lines, 'END:VCALENDAR', ''].join('\r\n');

const seriesOf = (events: readonly RawEvent[]): RawEvent[] => events.filter((e) => e.uid?.startsWith(`${SERIES_UID}#`));

/** Every Tuesday (local date) inside a window, by walking its days with luxon. */
function tuesdaysIn(w: ParseWindow): string[] {
  const out: string[] = [];
  for (let d = w.start.setZone(ZONE).startOf('day'); d <= w.end; d = d.plus({ days: 1 })) if (d.weekday === 2) out.push(d.toISODate()!);
  return out;
}

describe('parseICal: Google Calendar export with a weekly series', () => {
  const { events, noStart } = parseICal(google, { window: WINDOW });
  const series = seriesOf(events);

  test('expands only the window’s Tuesdays, minus the EXDATE, each with <UID>#<UTC recurrence id>', () => {
    const expectedRids = tuesdaysIn(WINDOW)
      .filter((d) => d !== '2026-12-29')
      .map((d) => utcIso(wall(`${d}T10:30`)));
    assert.ok(expectedRids.length >= 12, 'the oracle itself found the window’s Tuesdays');
    assert.deepEqual(series.map((e) => e.uid).sort(), expectedRids.map((rid) => `${SERIES_UID}#${rid}`).sort());
    assert.equal(noStart, 0);
  });

  test('unmoved occurrences start 10:30 and end 11:15 Los Angeles time, inside the window', () => {
    const plain = series.filter((e) => !e.title.includes('Wednesday'));
    assert.ok(plain.length > 10);
    for (const e of plain) {
      const day = e.start.at.setZone(ZONE).toISODate()!;
      assert.equal(e.start.at.toMillis(), wall(`${day}T10:30`), e.uid ?? '');
      assert.equal(e.end?.at.toMillis(), wall(`${day}T11:15`), e.uid ?? '');
      assert.equal(e.start.dateOnly, false);
      assert.ok(e.start.at >= WINDOW.start && e.start.at <= WINDOW.end, `${e.uid} outside the window`);
    }
  });

  test('occurrences before and after the 2026-11-01 DST change both keep 10:30 local', () => {
    // 70 days back reaches the series' first Tuesdays in September (PDT).
    const wide = buildWindow(NOW, 90, 70);
    const all = seriesOf(parseICal(google, { window: wide }).events);
    const oct27 = byUid(all, `${SERIES_UID}#2026-10-27T17:30:00Z`);
    const nov3 = byUid(all, `${SERIES_UID}#2026-11-03T18:30:00Z`);
    assert.equal(oct27.start.at.toMillis(), DateTime.fromISO('2026-10-27T10:30:00', { zone: 'America/Los_Angeles' }).toMillis());
    assert.equal(nov3.start.at.toMillis(), DateTime.fromISO('2026-11-03T10:30:00', { zone: 'America/Los_Angeles' }).toMillis());
    // A fixed-offset expansion would put them exactly 7×24 h apart; wall-clock keeps 10:30 and gains the hour.
    assert.equal(nov3.start.at.toMillis() - oct27.start.at.toMillis(), (7 * 24 + 1) * 3_600_000);
    const offsets = new Set(all.map((e) => e.start.at.setZone(ZONE).offset));
    assert.deepEqual(
      [...offsets].sort((a, b) => a - b),
      [-480, -420],
    );
    assert.ok(
      all.some((e) => e.uid === `${SERIES_UID}#2026-09-15T17:30:00Z`),
      'the first occurrence (DTSTART) is in the wide window',
    );
  });

  test('EXDATE removes the 2026-12-29 occurrence and nothing else', () => {
    assert.equal(series.filter((e) => e.start.at.setZone(ZONE).toISODate() === '2026-12-29').length, 0);
    assert.equal(series.filter((e) => e.uid === `${SERIES_UID}#${utcIso(wall('2026-12-29T10:30'))}`).length, 0);
    byUid(series, `${SERIES_UID}#${utcIso(wall('2026-12-22T10:30'))}`);
    byUid(series, `${SERIES_UID}#${utcIso(wall('2027-01-05T10:30'))}`);
  });

  test('a RECURRENCE-ID override moves its occurrence: new time and fields, the original occurrence’s uid', () => {
    const moved = byUid(series, `${SERIES_UID}#${utcIso(wall('2026-11-24T10:30'))}`);
    assert.equal(moved.start.at.toMillis(), wall('2026-11-25T16:00'));
    assert.equal(moved.end?.at.toMillis(), wall('2026-11-25T16:45'));
    assert.equal(moved.title, 'Toddler Storytime (Wednesday this week)');
    assert.equal(moved.cancelled, false);
    assert.equal(series.filter((e) => e.start.at.toMillis() === wall('2026-11-24T10:30')).length, 0, 'the original slot is gone');
  });

  test('an override with STATUS:CANCELLED yields that occurrence with cancelled: true', () => {
    const dec8 = byUid(series, `${SERIES_UID}#${utcIso(wall('2026-12-08T10:30'))}`);
    assert.equal(dec8.cancelled, true);
    assert.equal(dec8.start.at.toMillis(), wall('2026-12-08T10:30'));
    assert.deepEqual(
      series.filter((e) => e.cancelled).map((e) => e.uid),
      [dec8.uid],
    );
  });

  test('occurrence uids are stable across rebuilds a week apart', () => {
    const later = seriesOf(parseICal(google, { window: buildWindow(new Date('2026-11-28T17:00:00Z')) }).events);
    const before = new Map(series.map((e) => [e.uid, e.start.at.toMillis()]));
    const shared = later.filter((e) => before.has(e.uid));
    assert.ok(shared.length >= 10, `only ${shared.length} occurrences in common`);
    for (const e of shared) assert.equal(e.start.at.toMillis(), before.get(e.uid));
    // The later window starts a week later: the 2026-11-10 occurrence has left it.
    assert.ok(!later.some((e) => e.uid === `${SERIES_UID}#${utcIso(wall('2026-11-10T10:30'))}`));
  });

  test('folded, escaped DESCRIPTION and LOCATION come out unfolded and unescaped', () => {
    const e = series[0]!;
    assert.equal(
      e.description,
      'Stories, songs and rhymes for children ages 0–3 and their caregivers. No registration needed; space is limited to 30 families.\nFree!',
    );
    assert.equal(e.location, 'Rockridge Branch Library, 5366 College Ave, Oakland, CA 94618, USA');
  });

  test('an all-day VALUE=DATE event gives dateOnly starts/ends and endIsExclusiveDate', () => {
    const closed = byTitle(events, 'Library closed – Thanksgiving');
    assert.equal(closed.uid, '0hv2ltmq6o1lq8ptsl2tbd9f5k@google.com');
    assert.equal(closed.start.dateOnly, true);
    assert.equal(closed.start.at.toMillis(), wall('2026-11-26T00:00'));
    assert.equal(closed.end?.dateOnly, true);
    assert.equal(closed.end?.at.toMillis(), wall('2026-11-28T00:00'));
    assert.equal(closed.endIsExclusiveDate, true);
    assert.equal(closed.location, null, 'an empty LOCATION is no location');
    assert.equal(byTitle(events, 'Family Lantern Craft').endIsExclusiveDate, false);
  });

  test('a UTC (Z) DTSTART is converted to the instant it names', () => {
    const craft = byTitle(events, 'Family Lantern Craft');
    assert.equal(craft.start.at.toMillis(), Date.parse('2026-12-05T19:00:00Z'));
    assert.equal(craft.start.at.toMillis(), wall('2026-12-05T11:00'));
    assert.equal(craft.end?.at.toMillis(), Date.parse('2026-12-05T20:30:00Z'));
    assert.equal(craft.start.dateOnly, false);
  });

  test('TZID=America/New_York 10:00 is 07:00 in Los Angeles', () => {
    const talk = byTitle(events, 'Author Talk (live stream): Picture Books with Mo');
    assert.equal(talk.start.at.toMillis(), wall('2026-12-03T10:00', 'America/New_York'));
    assert.equal(talk.start.at.toMillis(), wall('2026-12-03T07:00'));
    assert.equal(talk.end?.at.toMillis(), wall('2026-12-03T08:00'));
  });
});

describe('parseICal: Outlook export', () => {
  const { events } = parseICal(fixture('outlook-export.ics'), { window: WINDOW });

  test('TZID="Pacific Standard Time" is America/Los_Angeles, DST included', () => {
    const winter = byTitle(events, 'Family Game Night');
    assert.equal(winter.start.at.toMillis(), wall('2026-12-04T17:30'));
    assert.equal(winter.end?.at.toMillis(), wall('2026-12-04T19:00'));
    // In July the zone is on PDT (-07:00); a fixed "standard time" reading would be an hour off.
    const summer = byTitle(events, 'Summer Movie Night');
    assert.equal(summer.start.at.toMillis(), Date.parse('2026-07-24T20:00:00-07:00'));
  });

  test('a folded UID is unfolded', () => {
    assert.equal(
      byTitle(events, 'Family Game Night').uid,
      '040000008200E00074C5B7101A82E00800000000D0B1A8E5A6F2DC01000000000000000010000000C3B8B2F1E8A4A04B9D0B4F1C2A6E7D11',
    );
  });

  test('X-ALT-DESC (HTML) is preferred over DESCRIPTION; DESCRIPTION is the fallback', () => {
    const night = byTitle(events, 'Family Game Night');
    assert.match(night.description ?? '', /^<!DOCTYPE HTML/);
    assert.match(night.description ?? '', /<B>whole family<\/B>/);
    assert.equal(byTitle(events, 'Summer Movie Night').description, 'Outdoor movie on the field. Bring a blanket.');
  });

  test('X-ALT-DESC text escapes (\\, \\n) are decoded like DESCRIPTION’s', () => {
    const html = byTitle(events, 'Family Game Night').description ?? '';
    assert.ok(!html.includes('\\,'), 'no escaped commas');
    assert.ok(!html.includes('\\n'), 'no escaped newlines');
    assert.match(html, /games, crafts and snacks/);
    assert.match(html, /<HTML>\n<HEAD>/);
  });
});

describe('parseICal: LibCal export', () => {
  const { events, noStart } = parseICal(fixture('libcal-events.ics'), { window: WINDOW });

  test('GEO, CATEGORIES (several lines, escaped commas), URL and ORGANIZER come through', () => {
    const lego = byTitle(events, 'LEGO Robotics Club');
    assert.equal(lego.uid, 'LibCal-1458-11620871');
    assert.equal(lego.lat, 37.868223);
    assert.equal(lego.lng, -122.268744);
    assert.deepEqual(lego.categories, ['Kids, Tweens & Teens', 'STEM', 'Registration Required', 'Hands-on']);
    assert.equal(lego.url, 'https://berkeleypubliclibrary.libcal.com/event/11620871');
    assert.equal(lego.organizerName, "Central Library Children's Services");
    assert.equal(lego.location, "Central Library - 3rd Floor Children's Room");
    assert.equal(lego.start.at.toMillis(), wall('2026-12-02T15:30'));
  });

  test('a VEVENT without DTSTART is counted in noStart, the others still parse', () => {
    assert.equal(noStart, 1);
    assert.deepEqual(
      events.map((e) => e.title),
      ['LEGO Robotics Club'],
    );
  });
});

describe('parseICal: runaway recurrence rules', () => {
  const inWindow = (e: RawEvent): boolean => e.start.at >= WINDOW.start && e.start.at <= WINDOW.end;

  test('FREQ=MINUTELY without an end yields at most MAX_OCCURRENCES, one minute apart', () => {
    const { events } = parseICal(
      cal('BEGIN:VEVENT', 'UID:minutely@test', 'DTSTART;TZID=America/Los_Angeles:20261201T090000', 'RRULE:FREQ=MINUTELY', 'SUMMARY:Spam', 'END:VEVENT'),
      { window: WINDOW },
    );
    assert.ok(events.length > 0 && events.length <= MAX_OCCURRENCES, `${events.length} occurrences`);
    assert.equal(new Set(events.map((e) => e.uid)).size, events.length, 'uids are distinct');
    assert.equal(events[0]!.start.at.toMillis(), wall('2026-12-01T09:00'));
    assert.equal(events[1]!.start.at.toMillis() - events[0]!.start.at.toMillis(), 60_000);
    assert.ok(events.every(inWindow));
  });

  test('FREQ=SECONDLY without an end yields at most MAX_OCCURRENCES, in or long before the window', { timeout: 30_000 }, () => {
    for (const dtstart of ['DTSTART:20261124T183000Z', 'DTSTART;TZID=America/Los_Angeles:20190101T000000']) {
      const { events } = parseICal(cal('BEGIN:VEVENT', 'UID:secondly@test', dtstart, 'RRULE:FREQ=SECONDLY', 'SUMMARY:Spam', 'END:VEVENT'), { window: WINDOW });
      assert.ok(events.length <= MAX_OCCURRENCES, `${dtstart}: ${events.length} occurrences`);
      assert.ok(events.every(inWindow), dtstart);
    }
  });
});

describe('parseICal: documents that are not iCalendar', () => {
  test('an HTML page throws FeedFormatError', () => {
    assert.throws(
      () => parseICal('<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>', { window: WINDOW }),
      FeedFormatError,
    );
  });

  test('a VEVENT without the BEGIN:VCALENDAR wrapper throws FeedFormatError', () => {
    assert.throws(() => parseICal('BEGIN:VEVENT\r\nUID:x\r\nDTSTART:20261124T183000Z\r\nSUMMARY:Loose\r\nEND:VEVENT\r\n', { window: WINDOW }), FeedFormatError);
  });

  test('a truncated download (no END:VCALENDAR) throws FeedFormatError', () => {
    const truncated = google.slice(0, google.indexOf('SUMMARY:Family Lantern Craft'));
    assert.throws(() => parseICal(truncated, { window: WINDOW }), FeedFormatError);
  });
});

describe('parseICal: malformed and unusual input', () => {
  const series = (...extra: string[]): string =>
    cal(
      'BEGIN:VEVENT',
      'UID:utc-forms@test',
      'DTSTART;TZID=America/Los_Angeles:20261110T103000',
      'DTEND;TZID=America/Los_Angeles:20261110T111500',
      'RRULE:FREQ=WEEKLY;COUNT=6;BYDAY=TU',
      ...extra,
    );

  test('an EXDATE in UTC form removes the occurrence of a TZID series', () => {
    // RFC 5545 §3.8.5.1 allows EXDATE as UTC; 2026-12-01T18:30Z is 10:30 PST, the 4th occurrence.
    const { events } = parseICal(series('EXDATE:20261201T183000Z', 'SUMMARY:Chess Club', 'END:VEVENT'), { window: WINDOW });
    assert.equal(events.length, 5);
    assert.ok(!events.some((e) => e.start.at.toMillis() === wall('2026-12-01T10:30')));
  });

  test('a RECURRENCE-ID in UTC form overrides the occurrence of a TZID series', () => {
    const { events } = parseICal(
      series(
        'SUMMARY:Chess Club',
        'END:VEVENT',
        'BEGIN:VEVENT',
        'UID:utc-forms@test',
        'RECURRENCE-ID:20261117T183000Z',
        'DTSTART;TZID=America/Los_Angeles:20261118T160000',
        'DTEND;TZID=America/Los_Angeles:20261118T164500',
        'SUMMARY:Chess Club (moved)',
        'END:VEVENT',
      ),
      { window: WINDOW },
    );
    const moved = byUid(events, `utc-forms@test#${utcIso(wall('2026-11-17T10:30'))}`);
    assert.equal(moved.title, 'Chess Club (moved)');
    assert.equal(moved.start.at.toMillis(), wall('2026-11-18T16:00'));
  });

  test('the same UID twice is read twice, each with its SEQUENCE: normalizeAll decides what is a copy (accounting.test.ts)', () => {
    const ev = (seq: number | null, summary: string) => [
      'BEGIN:VEVENT',
      'UID:rev@test',
      'DTSTART:20261124T183000Z',
      ...(seq === null ? [] : [`SEQUENCE:${seq}`]),
      `SUMMARY:${summary}`,
      'END:VEVENT',
    ];
    const out = parseICal(cal(...ev(0, 'Old'), ...ev(2, 'Revised'), ...ev(null, 'Unnumbered')), { window: WINDOW });
    assert.deepEqual(
      out.events.map((e) => [e.uid, e.title, e.sequence]),
      [
        ['rev@test', 'Old', 0],
        ['rev@test', 'Revised', 2],
        ['rev@test', 'Unnumbered', 0],
      ],
    );
  });

  test('one VEVENT with an unreadable DTSTART is counted, not fatal to the feed', () => {
    for (const bad of ['DTSTART:TBD', 'DTSTART:', 'DTSTART;TZID=America/Los_Angeles:Dec 9 2026']) {
      const out = parseICal(
        cal(
          'BEGIN:VEVENT',
          'UID:good@test',
          'DTSTART:20261124T183000Z',
          'SUMMARY:Good',
          'END:VEVENT',
          'BEGIN:VEVENT',
          'UID:bad@test',
          bad,
          'SUMMARY:Bad',
          'END:VEVENT',
        ),
        { window: WINDOW },
      );
      assert.deepEqual(
        out.events.map((e) => e.title),
        ['Good'],
        bad,
      );
      assert.equal(out.noStart, 1, bad);
    }
  });

  test('a dashed VALUE=DATE (2026-12-09) is read as that date or counted in noStart, never as another date', () => {
    const out = parseICal(cal('BEGIN:VEVENT', 'UID:dashed@test', 'DTSTART;VALUE=DATE:2026-12-09', 'SUMMARY:Tree Lighting', 'END:VEVENT'), { window: WINDOW });
    if (out.events.length === 0) assert.equal(out.noStart, 1);
    else assert.equal(out.events[0]!.start.at.toMillis(), wall('2026-12-09T00:00'));
    // A dashed date-time is read as written, in its TZID.
    const dt = parseICal(
      cal('BEGIN:VEVENT', 'UID:dashed-dt@test', 'DTSTART;TZID=America/Los_Angeles:2026-12-09T10:30:00', 'SUMMARY:Tree Lighting', 'END:VEVENT'),
      { window: WINDOW },
    );
    assert.equal(dt.events[0]?.start.at.toMillis(), wall('2026-12-09T10:30'));
  });
});

describe('parseICal: price flags', () => {
  test('fablab-cottbus.ai1ec.ics: All-in-One Event Calendar "X-COST-TYPE:free" → isFree true; without it → null', () => {
    const vevent = (...extra: string[]) =>
      cal(
        'BEGIN:VEVENT',
        'UID:ai1ec-1862@blog.fablab-cottbus.de',
        'DTSTART;VALUE=DATE:20261209',
        'DTEND;VALUE=DATE:20261210',
        'SUMMARY:Lab geschlossen: Wir sind auf dem Karlstraßenfest',
        ...extra,
        'END:VEVENT',
      );
    assert.equal(parseICal(vevent('X-COST-TYPE:free'), { window: WINDOW }).events[0]!.isFree, true);
    assert.equal(parseICal(vevent(), { window: WINDOW }).events[0]!.isFree, null);
  });
});

describe('parseICal: an override whose RECURRENCE-ID cannot be read', () => {
  test('is one item without a readable start; the series it names is still expanded', () => {
    // Found by the parser fuzzer: a mutated Google Calendar export, "RECURRENCE-ID;TZID=UID:…".
    const out = parseICal(
      cal(
        'BEGIN:VEVENT',
        'UID:series@test',
        'DTSTART;TZID=America/Los_Angeles:20261124T103000',
        'RRULE:FREQ=WEEKLY;COUNT=3',
        'SUMMARY:Toddler Storytime',
        'END:VEVENT',
        'BEGIN:VEVENT',
        'UID:series@test',
        'RECURRENCE-ID;TZID=UID:series@test',
        'DTSTART;TZID=America/Los_Angeles:20261201T160000',
        'SUMMARY:Toddler Storytime (moved)',
        'END:VEVENT',
      ),
      { window: WINDOW },
    );
    assert.deepEqual(
      out.events.map((e) => e.start.at.toMillis()),
      [wall('2026-11-24T10:30'), wall('2026-12-01T10:30'), wall('2026-12-08T10:30')],
    );
    assert.equal(out.noStart, 1);
  });
});
