// What the bundled sample's organizers put on their calendars, phrased the way real calendars
// phrase it: ages in titles, descriptions or fields, HTML with entities, prices as text.
// Data, not logic: the generator in model.ts decides where and when each program runs.

export type Kind = 'library' | 'museum' | 'zoo' | 'parks' | 'aggregator';

export interface Program {
  readonly key: string;
  readonly title: string;
  /** HTML, as upstream CMSs export it. */
  readonly html: string;
  /** An ages field for formats that carry one (RSS ev:ages, CSV Ages, JSON-LD audience). */
  readonly agesField?: string;
  readonly categories: readonly string[];
  readonly minutes: number;
  readonly price?: string;
  /** Needs registration on the host's site. */
  readonly register?: boolean;
  readonly allDay?: boolean;
}

export const WEEKLY: Readonly<Record<Exclude<Kind, 'aggregator'>, readonly Program[]>> = {
  library: [
    {
      key: 'toddler-storytime',
      title: 'Toddler Storytime',
      html: '<p>Songs, rhymes &amp; stories for toddlers <strong>18 months&ndash;3 years</strong> and their grown&#8209;ups.</p><p>No registration needed.</p>',
      categories: ['Storytime', 'Kids'],
      minutes: 30,
    },
    {
      key: 'baby-rhyme-time',
      title: 'Baby Rhyme Time',
      html: '<p>Bounce, sing and play! For babies (birth&ndash;12 months) and their caregivers.&nbsp;Stroller parking available.</p>',
      categories: ['Storytime', 'Early Literacy'],
      minutes: 30,
    },
    {
      key: 'preschool-storytime',
      title: 'Preschool Storytime (Ages 3-5)',
      html: '<div>Picture books, flannel stories &amp; a simple craft.<br/>Best for preschoolers.</div>',
      categories: ['Storytime'],
      minutes: 45,
    },
    {
      key: 'family-storytime',
      title: 'Family Storytime',
      html: '<p>Stories and songs for the whole family &mdash; all ages welcome!</p>',
      categories: ['Storytime', 'Family'],
      minutes: 45,
    },
    {
      key: 'bilingual-storytime',
      title: 'Bilingual Storytime / Cuentos bilingües',
      html: '<p>Stories, songs &amp; rhymes in Spanish and English. <em>Para niños de 0&ndash;5 años.</em> Ages 0-5.</p>',
      agesField: '0-5 years',
      categories: ['Storytime', 'Bilingual', 'Spanish'],
      minutes: 45,
    },
    {
      key: 'lego-club',
      title: 'LEGO® Build Club',
      html: '<p>We supply the bricks, you bring the imagination! Grades K-2.</p>',
      agesField: 'Grades K-2',
      categories: ['STEM', 'Kids'],
      minutes: 60,
    },
    {
      key: 'teen-game-night',
      title: 'Teen Game Night',
      html: '<p>Video games, board games &amp; snacks. For teens.</p>',
      categories: ['Teens', 'Games'],
      minutes: 90,
    },
    {
      key: 'tween-maker',
      title: 'Tween Maker Club',
      html: '<p>Tweens build, tinker and craft &ndash; this month: <b>paper circuits</b>.</p>',
      categories: ['Maker', 'Crafts'],
      minutes: 60,
      register: true,
    },
    {
      key: 'coding-robots',
      title: 'STEM Lab: Coding with Robots',
      html: '<p>Program Dash &amp; Dot robots. Grades 3&ndash;5. Space is limited; <a href="https://example.org/register">register online</a>.</p>',
      agesField: 'Grades 3-5',
      categories: ['STEM', 'Technology'],
      minutes: 60,
      register: true,
    },
    {
      key: 'paws-to-read',
      title: 'Paws to Read',
      html: '<p>Practice reading aloud to a certified therapy dog! Ages 5 and up.</p>',
      categories: ['Reading', 'Animals'],
      minutes: 60,
    },
    { key: 'chess-club', title: 'Chess Club for Kids', html: '<p>Beginners welcome. For kids ages 7-12.</p>', categories: ['Games'], minutes: 60 },
    {
      key: 'homework-help',
      title: 'Homework Help',
      html: '<p>Drop-in tutoring for students in grades K-8.</p>',
      categories: ['Homework Help', 'Education'],
      minutes: 120,
    },
    {
      key: 'sensory-storytime',
      title: 'Sensory-Friendly Storytime',
      html: '<p>A calm, sensory-friendly storytime with fidgets and movement. Ages 2+.</p>',
      categories: ['Storytime', 'Accessibility'],
      minutes: 30,
    },
    {
      key: 'adult-book-club',
      title: 'Evening Book Club',
      html: '<p>This month&rsquo;s pick: <i>Demon Copperhead</i>. Adults only.</p>',
      agesField: 'Adults only',
      categories: ['Book Club'],
      minutes: 90,
    },
  ],
  museum: [
    {
      key: 'family-science',
      title: 'Family Science Saturday',
      html: '<p>Hands-on experiments for curious kids ages 5 and up &amp; their families.</p>',
      categories: ['Science', 'Family'],
      minutes: 120,
      price: 'Free with museum admission',
    },
    {
      key: 'tinkering',
      title: 'Tinkering Studio Drop-In',
      html: '<p>Build, test, rebuild. All ages.</p>',
      categories: ['Maker', 'Exhibits'],
      minutes: 180,
      price: 'Free with admission',
    },
    {
      key: 'little-explorers',
      title: 'Little Explorers',
      html: '<p>Play-based discovery for preschoolers and their grown-ups.</p>',
      agesField: '2-5',
      categories: ['Early Childhood'],
      minutes: 60,
      price: '$5 per child',
    },
    {
      key: 'planetarium',
      title: 'Planetarium Show: Our Solar System',
      html: '<p>A tour of the planets under the dome. Recommended for ages 6+.</p>',
      categories: ['Astronomy'],
      minutes: 40,
      price: '$5–$8',
    },
    {
      key: 'family-art',
      title: 'Family Art Workshop: Printmaking',
      html: '<p>Make prints with a teaching artist. Ages 6&ndash;12 with an adult.</p>',
      categories: ['Art Workshop'],
      minutes: 90,
      price: '$15 members, $20 non-members',
      register: true,
    },
    {
      key: 'homeschool-day',
      title: 'Homeschool Day',
      html: '<p>Guided activities for homeschool families, grades 1-6.</p>',
      categories: ['Education'],
      minutes: 180,
      price: '$12',
    },
    {
      key: 'after-dark',
      title: 'After Dark: Science on the Rocks (21+)',
      html: '<p>Cocktails and curiosity. 21+ only, ID required.</p>',
      categories: ['Nightlife'],
      minutes: 180,
      price: '$25',
    },
  ],
  zoo: [
    {
      key: 'keeper-talk',
      title: 'Zookeeper Talk: Penguins',
      html: '<p>Meet the keepers and learn how we care for our penguin colony. For all ages.</p>',
      categories: ['Animals', 'Talk'],
      minutes: 30,
      price: 'Free with zoo admission',
    },
    {
      key: 'toddler-tuesdays',
      title: 'Toddler Tuesdays at the Zoo',
      html: '<p>Songs, stories and animal visitors for toddlers.</p>',
      categories: ['Animals', 'Early Childhood'],
      minutes: 45,
      price: 'Free with zoo admission',
    },
    {
      key: 'animal-encounter',
      title: 'Animal Encounter: Reptiles',
      html: '<p>Get up close with a bearded dragon &amp; a corn snake. Ages 3 and up.</p>',
      categories: ['Animals'],
      minutes: 30,
      price: '$10',
    },
    {
      key: 'junior-keeper',
      title: 'Junior Zookeeper Workshop',
      html: '<p>Behind-the-scenes workshop for kids 8-12.</p>',
      categories: ['Workshop', 'Animals'],
      minutes: 150,
      price: '$45',
      register: true,
    },
  ],
  parks: [
    {
      key: 'nature-walk',
      title: 'Family Nature Walk',
      html: '<p>A gentle 1-mile walk with a naturalist. Strollers welcome. All ages.</p>',
      categories: ['Nature', 'Outdoors'],
      minutes: 90,
      price: 'Free',
    },
    {
      key: 'junior-ranger',
      title: 'Junior Ranger Program',
      html: '<p>Earn your badge! For ages 7-12.</p>',
      agesField: '7-12',
      categories: ['Nature', 'Education'],
      minutes: 90,
      price: 'Free',
    },
    {
      key: 'soccer-clinic',
      title: 'Kids Soccer Clinic (ages 5-8)',
      html: '<p>Skills, drills and small-sided games. Bring water and shin guards.</p>',
      categories: ['Sports'],
      minutes: 60,
      price: '$10 drop-in',
    },
    {
      key: 'toddler-playgroup',
      title: 'Toddler Playgroup in the Park',
      html: '<p>Open play with bubbles, balls and parachute games for toddlers.</p>',
      categories: ['Playgroup'],
      minutes: 60,
      price: 'Free',
    },
    {
      key: 'family-yoga',
      title: 'Family Yoga on the Lawn',
      html: '<p>Bring a mat. Kids 4 &amp; up with a grown-up.</p>',
      categories: ['Fitness', 'Outdoors'],
      minutes: 45,
      price: 'Free',
    },
    {
      key: 'bird-walk',
      title: 'Beginner Bird Walk',
      html: '<p>Binoculars provided. Ages 8 and up.</p>',
      categories: ['Birding', 'Nature'],
      minutes: 90,
      price: 'Free',
    },
  ],
};

/** Occasional events by month (1–12): holidays (seasonal) and fairs (festivals). */
export const SEASONAL: Readonly<Record<number, readonly Program[]>> = {
  1: [
    {
      key: 'lunar-new-year',
      title: 'Lunar New Year Celebration',
      html: '<p>Lion dance, lantern crafts &amp; stories to welcome the Year of the Horse! All ages.</p>',
      categories: ['Holiday', 'Culture'],
      minutes: 120,
      price: 'Free',
    },
  ],
  2: [
    {
      key: 'lunar-new-year',
      title: 'Lunar New Year Lantern Craft',
      html: '<p>Make a paper lantern for the Lunar New Year. Ages 4 and up.</p>',
      categories: ['Holiday', 'Crafts'],
      minutes: 60,
      price: 'Free',
    },
  ],
  3: [
    {
      key: 'egg-hunt',
      title: 'Spring Egg Hunt',
      html: '<p>Egg hunt by age group: toddlers, ages 3-5 and ages 6-9. Bring a basket!</p>',
      categories: ['Holiday'],
      minutes: 90,
      price: 'Free',
    },
  ],
  4: [
    {
      key: 'egg-hunt',
      title: 'Easter Egg Hunt & Spring Fair',
      html: '<p>Egg hunts, face painting and a bounce house. Ages 0-10.</p>',
      categories: ['Holiday', 'Fair'],
      minutes: 180,
      price: 'Free',
    },
  ],
  5: [
    {
      key: 'mothers-day',
      title: "Mother's Day Card Craft",
      html: '<p>Make a pop-up card. Ages 3 and up.</p>',
      categories: ['Crafts'],
      minutes: 60,
      price: 'Free',
    },
  ],
  6: [
    {
      key: 'summer-reading',
      title: 'Summer Reading Kickoff Festival',
      html: '<p>Music, magic and prizes to start summer reading. All ages.</p>',
      categories: ['Festival', 'Reading'],
      minutes: 180,
      price: 'Free',
    },
  ],
  7: [
    {
      key: 'fourth-of-july',
      title: 'Fourth of July Kids Parade',
      html: '<p>Decorate your bike or wagon and join the parade! All ages.</p>',
      categories: ['Holiday', 'Parade'],
      minutes: 90,
      price: 'Free',
    },
  ],
  8: [
    {
      key: 'back-to-school',
      title: 'Back-to-School Fair',
      html: '<p>Free backpacks, vision screenings and library cards. Grades K-8.</p>',
      categories: ['Fair', 'Community'],
      minutes: 180,
      price: 'Free',
    },
  ],
  9: [
    {
      key: 'kids-book-fest',
      title: "Children's Book Festival",
      html: '<p>Author readings, illustrators &amp; a book swap. All ages.</p>',
      categories: ['Festival', 'Books'],
      minutes: 240,
      price: 'Free',
      allDay: true,
    },
  ],
  10: [
    {
      key: 'halloween-parade',
      title: 'Halloween Costume Parade',
      html: '<p>Wear your costume for a not-so-spooky parade &amp; treats. Ages 2-10.</p>',
      categories: ['Halloween'],
      minutes: 60,
      price: 'Free',
    },
    {
      key: 'pumpkin-patch',
      title: 'Pumpkin Patch Weekend',
      html: '<p>Pick a pumpkin, hay maze &amp; crafts. All ages.</p>',
      categories: ['Seasonal', 'Fall'],
      minutes: 300,
      price: '$5 per pumpkin',
      allDay: true,
    },
  ],
  11: [
    {
      key: 'dia-de-muertos',
      title: 'Día de los Muertos Family Celebration',
      html: '<p>Papel picado, sugar-skull art and music. Todas las edades / all ages.</p>',
      categories: ['Culture', 'Holiday'],
      minutes: 120,
      price: 'Free',
    },
    {
      key: 'thanksgiving-crafts',
      title: 'Thanksgiving Gratitude Crafts',
      html: '<p>Make a gratitude turkey! Ages 3-8.</p>',
      categories: ['Crafts', 'Holiday'],
      minutes: 60,
      price: 'Free',
    },
    {
      key: 'winter-fair',
      title: 'Holiday Crafts Fair',
      html: '<p>Kid-made crafts, cocoa &amp; carolers. All ages.</p>',
      categories: ['Fair'],
      minutes: 240,
      price: 'Free',
      allDay: true,
    },
  ],
  12: [
    {
      key: 'holiday-singalong',
      title: 'Winter Holiday Sing-Along',
      html: '<p>Seasonal songs from many traditions&mdash;Hanukkah, Christmas &amp; Kwanzaa. All ages.</p>',
      categories: ['Music', 'Holiday'],
      minutes: 45,
      price: 'Free',
    },
    {
      key: 'gingerbread',
      title: 'Gingerbread House Workshop',
      html: '<p>Build (and eat) a gingerbread house. Ages 5-12 with an adult.</p>',
      categories: ['Holiday', 'Workshop'],
      minutes: 90,
      price: '$20 per house',
      register: true,
    },
  ],
};

/** Monthly festivals any organizer may host. */
export const FESTIVALS: readonly Program[] = [
  {
    key: 'street-fair',
    title: 'Family Street Fair',
    html: '<p>Live music, bounce houses, food trucks &amp; a kids&rsquo; zone. All ages.</p>',
    categories: ['Street Fair'],
    minutes: 300,
    price: 'Free admission',
    allDay: true,
  },
  {
    key: 'music-fest',
    title: "Children's Music Festival",
    html: '<p>Kindie rock bands on two stages. All ages.</p>',
    categories: ['Music', 'Festival'],
    minutes: 240,
    price: 'Free',
  },
];
