import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bareHost, imageUrl, isFeedAddress, organizerUrl, ticketUrl } from '../../../../workers/snapshot/normalize/links.ts';

describe('privacy rules for links', () => {
  test('source is the bare host domain', () => {
    assert.equal(bareHost('https://www.sfpl.org/events?x=1'), 'sfpl.org');
    assert.equal(bareHost('https://library.cityofpaloalto.org/'), 'library.cityofpaloalto.org');
  });

  test('feed addresses are recognized', () => {
    for (const u of ['https://sfpl.org/events/feed.ics', 'https://x.org/calendar/rss', 'https://x.org/events/feed/', 'https://x.org/e?format=ical', 'webcal://x.org/cal', 'https://x.org/calendar/export/123']) {
      assert.ok(isFeedAddress(u), u);
    }
    assert.ok(!isFeedAddress('https://sfpl.org/locations/mission'));
    assert.ok(isFeedAddress('https://x.org/kids', new Set(['https://x.org/kids'])), 'a registry feed address is a feed even when it looks like a page');
  });

  test('organizer_url is never a feed address: the vetted site replaces it', () => {
    assert.equal(organizerUrl('https://oaklandlibrary.org/events/feed.rss', 'https://oaklandlibrary.org', new Set()), 'https://oaklandlibrary.org/');
    assert.equal(organizerUrl('https://oaklandlibrary.org/kids', 'https://oaklandlibrary.org', new Set()), 'https://oaklandlibrary.org/kids');
    assert.equal(organizerUrl(null, null, new Set()), null);
    assert.equal(organizerUrl('javascript:alert(1)', null, new Set()), null);
  });

  test('ticket_url only on the host organizer\'s own site (registrable domain, Public Suffix List aware)', () => {
    assert.equal(ticketUrl('https://sfpl.org/events/123/register', 'https://sfpl.org'), 'https://sfpl.org/events/123/register');
    assert.equal(ticketUrl('https://sfpl.libcal.example/event/1', 'https://sfpl.org'), null);
    assert.equal(ticketUrl('https://events.sjpl.org/e/1', 'https://www.sjpl.org'), 'https://events.sjpl.org/e/1');
    assert.equal(ticketUrl('https://www.eventbrite.com/e/123', 'https://www.exploratorium.edu'), null);
    // ca.us is a public suffix: two cities under it are different sites.
    assert.equal(ticketUrl('https://www.ci.berkeley.ca.us/x', 'https://www.cityofalbany.ca.us'), null);
    assert.equal(ticketUrl('https://sfpl.org/x', null), null);
  });

  test('images only over https', () => {
    assert.equal(imageUrl('http://x.org/a.jpg'), null);
    assert.equal(imageUrl('https://x.org/a.jpg'), 'https://x.org/a.jpg');
  });
});
