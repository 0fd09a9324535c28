// schema.org Event for an event page, shaped for Google's event rich results: the required name,
// startDate and location (a Place with a PostalAddress), and every recommended property the record
// can honestly fill. Nothing is invented: no offers without a known price, no organizer without a name.
import type { EventRecord } from '../../core/record.ts';
import { pacificDay } from './format.ts';
import { httpUrl } from './html.ts';

const SCHEMA = 'https://schema.org';

// The record's address reads "street, City, CA ZIP" (or "City, CA ZIP", or without the ZIP).
const STATE_ZIP = /^CA(?:\s+(\d{5}(?:-\d{4})?))?$/;

interface PostalAddress {
  '@type': 'PostalAddress';
  streetAddress?: string;
  addressLocality: string;
  addressRegion: 'CA';
  postalCode?: string;
  addressCountry: 'US';
}

/** The record's one-line address as its parts; the venue's city when the line does not parse. */
export function postalAddress(venue: EventRecord['venue']): PostalAddress {
  const parts = venue.address.split(',').map((p) => p.trim());
  const tail = STATE_ZIP.exec(parts[parts.length - 1] ?? '');
  if (tail === null || parts.length < 2) {
    return { '@type': 'PostalAddress', streetAddress: venue.address, addressLocality: venue.city, addressRegion: 'CA', addressCountry: 'US' };
  }
  const street = parts.slice(0, -2).join(', ');
  return {
    '@type': 'PostalAddress',
    ...(street === '' ? {} : { streetAddress: street }),
    addressLocality: parts[parts.length - 2] ?? venue.city,
    addressRegion: 'CA',
    ...(tail[1] === undefined ? {} : { postalCode: tail[1] }),
    addressCountry: 'US',
  };
}

/** schema.org's typicalAgeRange: "3-5", or "12-" for an open top (the record caps ages at 18). */
function typicalAgeRange(r: EventRecord): string | null {
  const y = r.age_range_years;
  if (y === null) return null;
  return y.max_years >= 18 ? `${y.min_years}-` : `${y.min_years}-${y.max_years}`;
}

/** An Offer when the price is known (a number) or the event is free; a bare note says too little. */
function offer(r: EventRecord): object | null {
  const amount = r.is_free ? 0 : (r.price?.min ?? r.price?.max ?? null);
  if (amount === null) return null;
  return {
    '@type': 'Offer',
    price: amount,
    priceCurrency: 'USD',
    url: httpUrl(r.ticket_url) ?? r.event_url,
    availability: r.is_canceled ? `${SCHEMA}/Discontinued` : `${SCHEMA}/InStock`,
  };
}

/**
 * startDate and endDate: schema.org Date or DateTime. An all-day event is its Pacific days
 * ("2026-11-21"), as Google's event guidelines ask for an event with no time of day; its record's
 * midnight and 23:59:59 would state times nobody set.
 */
function eventDates(r: EventRecord): { startDate: string; endDate?: string } {
  if (!r.all_day) return { startDate: r.start_datetime, ...(r.end_datetime === null ? {} : { endDate: r.end_datetime }) };
  const startDate = pacificDay(r.start_datetime);
  return { startDate, ...(r.end_datetime === null ? {} : { endDate: pacificDay(r.end_datetime) }) };
}

export function eventJsonLd(r: EventRecord): object {
  const description = r.description ?? r.summary;
  const image = httpUrl(r.image_url);
  const organizerUrl = httpUrl(r.organizer_url);
  const offers = offer(r);
  const ages = typicalAgeRange(r);
  return {
    '@context': SCHEMA,
    '@type': 'Event',
    name: r.title,
    ...(description === null ? {} : { description }),
    ...eventDates(r),
    eventStatus: r.is_canceled ? `${SCHEMA}/EventCancelled` : `${SCHEMA}/EventScheduled`,
    eventAttendanceMode: `${SCHEMA}/OfflineEventAttendanceMode`,
    location: {
      '@type': 'Place',
      name: r.venue.name,
      address: postalAddress(r.venue),
      // A ZIP's or a town's point is no coordinate of the place.
      ...(r.venue.geo_precision === 'zip' || r.venue.geo_precision === 'place'
        ? {}
        : { geo: { '@type': 'GeoCoordinates', latitude: r.venue.lat, longitude: r.venue.lng } }),
    },
    ...(r.organizer === null ? {} : { organizer: { '@type': 'Organization', name: r.organizer, ...(organizerUrl === null ? {} : { url: organizerUrl }) } }),
    ...(offers === null ? {} : { offers }),
    isAccessibleForFree: r.is_free,
    ...(ages === null ? {} : { typicalAgeRange: ages }),
    ...(image === null ? {} : { image: [image] }),
    url: r.event_url,
  };
}
