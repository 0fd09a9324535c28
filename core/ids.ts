// Event ids: made by the snapshot builder, checked by every route that takes one.
import { createHash } from 'node:crypto';

export const ID_PREFIX = 'bsc_evt_';
/** Every id eventId() makes, and nothing else: what routes taking an id accept. */
export const EVENT_ID_PATTERN = /^bsc_evt_[0-9a-f]{20}$/;

/** bsc_evt_ + 80 bits of sha256(source id, upstream uid): stable for as long as the upstream uid is. */
export function eventId(sourceId: string, uid: string): string {
  return ID_PREFIX + createHash('sha256').update(sourceId).update('\u0000').update(uid).digest('hex').slice(0, 20);
}
