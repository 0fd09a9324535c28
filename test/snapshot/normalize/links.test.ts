import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bareHost, imageUrl, isFeedAddress, organizerKey, resolveOrganizer, ticketUrl, type VettedOrganizer } from '../../../snapshot/normalize/links.ts';

describe('privacy rules for links', () => {
  test('source is the bare host domain', () => {
    assert.equal(bareHost('https://www.sfpl.org/events?x=1'), 'sfpl.org');
    assert.equal(bareHost('https://library.cityofpaloalto.org/'), 'library.cityofpaloalto.org');
  });

  test('feed addresses are recognized', () => {
    for (const u of [
      'https://sfpl.org/events/feed.ics',
      'https://x.org/calendar/rss',
      'https://x.org/events/feed/',
      'https://x.org/e?format=ical',
      'webcal://x.org/cal',
      'https://x.org/calendar/export/123',
    ]) {
      assert.ok(isFeedAddress(u), u);
    }
    assert.ok(!isFeedAddress('https://sfpl.org/locations/mission'));
    assert.ok(isFeedAddress('https://x.org/kids', new Set(['https://x.org/kids'])), 'a registry feed address is a feed even when it looks like a page');
  });

  const SFPL: VettedOrganizer = { name: 'San Francisco Public Library', url: 'https://sfpl.org' };
  const ZOO: VettedOrganizer = { name: 'Oakland Zoo', url: 'https://www.oaklandzoo.org' };
  const KIDS: VettedOrganizer = { name: 'Bay Area Kids Calendar', url: 'https://www.bayareakidscalendar.example' };
  const known = new Map([SFPL, ZOO, KIDS].map((o) => [organizerKey(o.name), o]));
  const resolve = (name: string | null, url: string | null, ticket: string | null, source = SFPL, feeds: ReadonlySet<string> = new Set()) =>
    resolveOrganizer({ name, url, ticketUrl: ticket }, source, known, feeds);

  test('organizer_url is never a feed address: the vetted site replaces it', () => {
    const oak: VettedOrganizer = { name: 'Oakland Public Library', url: 'https://oaklandlibrary.org' };
    assert.equal(
      resolveOrganizer({ name: null, url: 'https://oaklandlibrary.org/events/feed.rss', ticketUrl: null }, oak, known, new Set()).organizerUrl,
      'https://oaklandlibrary.org/',
    );
    assert.equal(
      resolveOrganizer({ name: null, url: 'https://oaklandlibrary.org/kids', ticketUrl: null }, oak, known, new Set()).organizerUrl,
      'https://oaklandlibrary.org/kids',
    );
    assert.equal(
      resolveOrganizer({ name: null, url: 'javascript:alert(1)', ticketUrl: null }, oak, known, new Set()).organizerUrl,
      'https://oaklandlibrary.org/',
    );
    const feedSite: VettedOrganizer = { name: 'X', url: 'https://x.org/calendar/rss' };
    assert.equal(resolveOrganizer({ name: null, url: null, ticketUrl: null }, feedSite, known, new Set()).organizerUrl, null);
  });

  test("an item naming a registry organizer gets the registry's links, never its own (look-alike host)", () => {
    // The observed takeover: the item names SFPL, with its organizer URL and registration link on a look-alike host.
    const r = resolve('San Francisco Public Library', 'https://sfpl-org.example/', 'https://sfpl-org.example/register/42');
    assert.deepEqual(r, { organizer: 'San Francisco Public Library', organizerUrl: 'https://sfpl.org/', ticketUrl: null });
    // Variants: another spelling of the same name, a host that merely starts with the vetted one, no name at all.
    assert.deepEqual(resolve('SAN FRANCISCO PUBLIC LIBRARY.', 'https://sfpl.org.evil.example/', 'https://sfpl.org.evil.example/r'), r);
    assert.deepEqual(resolve(null, 'https://evil.example/', 'https://evil.example/r'), r);
    // The same links on the vetted site are kept: a branch page, a registration page.
    assert.deepEqual(resolve('San Francisco Public Library', 'https://sfpl.org/locations/mission', 'https://www.sfpl.org/events/42/register'), {
      organizer: 'San Francisco Public Library',
      organizerUrl: 'https://sfpl.org/locations/mission',
      ticketUrl: 'https://www.sfpl.org/events/42/register',
    });
  });

  test("an aggregator naming a registry organizer: that organizer's name, site and host, not the aggregator's or the item's", () => {
    assert.deepEqual(resolve('oakland zoo', 'https://oakland-zoo.example/', 'https://www.oaklandzoo.org/tickets/1', KIDS), {
      organizer: 'Oakland Zoo',
      organizerUrl: 'https://www.oaklandzoo.org/',
      ticketUrl: 'https://www.oaklandzoo.org/tickets/1',
    });
    // A registration link on the aggregator's own site is not the zoo's.
    assert.equal(resolve('Oakland Zoo', null, 'https://www.bayareakidscalendar.example/tickets/1', KIDS).ticketUrl, null);
  });

  test("an organizer the registry does not know keeps its name; its links only on the source's vetted site", () => {
    assert.deepEqual(resolve('Savor Seattle Tours', 'https://www.savorseattletours.com/', 'https://www.savorseattletours.com/book', KIDS), {
      organizer: 'Savor Seattle Tours',
      organizerUrl: null,
      ticketUrl: null,
    });
    assert.deepEqual(resolve('Friends of the Library', 'https://sfpl.org/friends', 'https://sfpl.org/events/7'), {
      organizer: 'Friends of the Library',
      organizerUrl: 'https://sfpl.org/friends',
      ticketUrl: 'https://sfpl.org/events/7',
    });
    // A name that only looks like a registry organizer is unknown: it gets no link off the vetted site.
    assert.deepEqual(resolve('San Francisco Public Library Events', 'https://sfpl-events.example/', 'https://sfpl-events.example/r'), {
      organizer: 'San Francisco Public Library Events',
      organizerUrl: null,
      ticketUrl: null,
    });
  });

  test("ticket_url only on the host organizer's own site (registrable domain, Public Suffix List aware)", () => {
    assert.equal(ticketUrl('https://sfpl.org/events/123/register', 'https://sfpl.org'), 'https://sfpl.org/events/123/register');
    assert.equal(ticketUrl('https://sfpl.libcal.example/event/1', 'https://sfpl.org'), null);
    assert.equal(ticketUrl('https://events.sjpl.org/e/1', 'https://www.sjpl.org'), 'https://events.sjpl.org/e/1');
    assert.equal(ticketUrl('https://www.eventbrite.com/e/123', 'https://www.exploratorium.edu'), null);
    // ca.us is a public suffix: two cities under it are different sites.
    assert.equal(ticketUrl('https://www.ci.berkeley.ca.us/x', 'https://www.cityofalbany.ca.us'), null);
    assert.equal(ticketUrl('https://sfpl.org/x', null), null);
    // Private suffixes (github.io, netlify.app) hold many owners' sites: another one is not the vetted one.
    assert.equal(ticketUrl('https://evil.github.io/register', 'https://bsapack149.github.io'), null);
    assert.equal(ticketUrl('https://bsapack149.github.io/register', 'https://bsapack149.github.io'), 'https://bsapack149.github.io/register');
    assert.equal(ticketUrl('https://192.0.2.1/register', 'https://192.0.2.1'), null);
  });

  test('images only over https', () => {
    assert.equal(imageUrl('http://x.org/a.jpg'), null);
    assert.equal(imageUrl('https://x.org/a.jpg'), 'https://x.org/a.jpg');
  });
});
