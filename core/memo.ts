// Bounded memoization for the pure text transforms of normalization. Calendars repeat themselves
// (a weekly storytime is the same title, description and place 50 times a year), so most events'
// HTML-to-text, age, category and venue work has already been done for an earlier occurrence.
export function memoize<A extends string, R>(fn: (key: A) => R, max = 20_000): (key: A) => R {
  let cache = new Map<A, R>();
  return (key: A): R => {
    const hit = cache.get(key);
    if (hit !== undefined || cache.has(key)) return hit as R;
    const value = fn(key);
    // Dropping the whole map when full keeps this O(1) and bounded; a recurring program is
    // back in the cache after its next occurrence.
    if (cache.size >= max) cache = new Map();
    cache.set(key, value);
    return value;
  };
}
