// The one fixed category taxonomy. /v1/categories publishes it and the category filter
// accepts exactly these slugs; order is the display order.
export const CATEGORY_SLUGS = [
  'storytime',
  'arts-crafts',
  'music',
  'dance',
  'theater',
  'film',
  'stem',
  'nature-outdoors',
  'animals',
  'sports-fitness',
  'museums-exhibits',
  'classes-workshops',
  'playgroups',
  'games',
  'camps',
  'festivals',
  'seasonal',
  'community',
] as const;

export type CategorySlug = (typeof CATEGORY_SLUGS)[number];

export const CATEGORY_LABELS: Readonly<Record<CategorySlug, string>> = {
  storytime: 'Storytime',
  'arts-crafts': 'Arts & crafts',
  music: 'Music',
  dance: 'Dance',
  theater: 'Theater & puppets',
  film: 'Film',
  stem: 'Science & technology',
  'nature-outdoors': 'Nature & outdoors',
  animals: 'Animals',
  'sports-fitness': 'Sports & fitness',
  'museums-exhibits': 'Museums & exhibits',
  'classes-workshops': 'Classes & workshops',
  playgroups: 'Playgroups',
  games: 'Games',
  camps: 'Camps',
  festivals: 'Fairs & festivals',
  seasonal: 'Seasonal & holidays',
  community: 'Community',
};
