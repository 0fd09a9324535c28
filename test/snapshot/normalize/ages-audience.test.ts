// Issue 25: ages and adults-only on real feeds the normalizer had never seen. Each observed failure
// is quoted (trimmed) first, then other wordings of the same defect, so that the class is fixed and
// not the example.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseAges, type AgeVerdict } from '../../../snapshot/normalize/ages.ts';

const years = (a: number, b: number): AgeVerdict => ({ kind: 'range', range: { min_months: a * 12, max_months: Math.min(b, 18) * 12 + 11 } });
const months = (a: number, b: number): AgeVerdict => ({ kind: 'range', range: { min_months: a, max_months: b } });
const ADULTS: AgeVerdict = { kind: 'adults' };
type Case = readonly [name: string, field: string | null, title: string, description: string | null, expected: AgeVerdict | null];

function cases(list: readonly Case[]): void {
  for (const [name, field, title, description, expected] of list) {
    test(name, () => assert.deepEqual(parseAges(field, title, description), expected));
  }
}

describe('adults only: a stated minimum of 18 or more, in any phrasing', () => {
  cases([
    ['observed: "AGE RESTRICTION: 18 and above"', null, 'Saturday Night Social', 'Doors at 9. AGE RESTRICTION: 18 and above. Tickets at the door.', ADULTS],
    ['"18 years of age or older"', null, 'Trivia', 'Players must be 18 years of age or older.', ADULTS],
    ['"21 and over"', null, 'Comedy Showcase', 'This show is 21 and over.', ADULTS],
    ['"must be 21 with ID"', null, 'Karaoke', 'Guests must be 21 with ID.', ADULTS],
    ['"21+ only"', null, 'Late Night Jazz', '21+ only.', ADULTS],
    ['"21-and-over"', null, 'Blues Jam', 'A 21-and-over event.', ADULTS],
    ['"over the age of 21"', null, 'Tasting', 'Open to guests over the age of 21.', ADULTS],
    ['"ages 21 & up"', null, 'Bingo', 'Ages 21 & up.', ADULTS],
    ['"age 18 and above" in the title', null, 'Life Skills (Age 18 and above)', null, ADULTS],
    ['"minimum age: 21"', null, 'Cooking Class', 'Minimum age: 21.', ADULTS],
    ['"no minors"', null, 'Poker Night', 'No minors.', ADULTS],
    ['"under 21 will not be admitted"', null, 'Night Market', 'Guests under 21 will not be admitted.', ADULTS],
    ['number words: "eighteen and over"', null, 'Open Mic', 'Performers and guests eighteen and over.', ADULTS],
    ['number words: "twenty-one and up"', null, 'Trivia', 'Twenty-one and up please.', ADULTS],
    ['"18+ event" in the field', '18+', 'Dance Party', null, ADULTS],
  ]);
});

describe('adults only: nudity, night clubs and lounges, drink with nothing for children', () => {
  cases([
    [
      'observed: figure drawing "from a nude model" (once read as 12–23 months)',
      null,
      'Open Studio: Figure Drawing',
      'Drop-in figure drawing session. Draw from a nude model in 1, 5 and 20 minute poses. Babies 12-23 months are not our audience.',
      ADULTS,
    ],
    ['"life drawing with a live model, nudity"', null, 'Life Drawing Drop-In', 'Three hours of long poses. Contains nudity.', ADULTS],
    ['"figure model" in other words', null, 'Sketch Night', 'Our figure model holds gesture poses.', ADULTS],
    ['observed: a nightclub night', null, 'Reggaeton Fridays', 'The best nightclub in the city. DJ sets all night.', ADULTS],
    ['a lounge night in the title', null, 'Latin Night at Azul Lounge', 'DJ and dancing.', ADULTS],
    ['a lounge named as the venue', null, 'House Music Sundays', 'Bottle service available at the cocktail lounge.', ADULTS],
    ['a club night', null, 'Deep House', 'Monthly club night with resident DJs.', ADULTS],
    ['a beer festival', null, 'Oktoberfest Celebration', 'Beer festival with twelve local breweries.', ADULTS],
    ['a cocktail class', null, 'Mixology 101', 'A hands-on cocktail class.', ADULTS],
    ['a sip-and-paint', null, 'Sip & Paint', 'Paint a sunset with a glass in hand.', ADULTS],
    ['books and brews', null, 'Books & Brews', 'Our monthly book club.', ADULTS],
  ]);
});

describe('adults only: a program for grown-ups with nothing for children', () => {
  cases([
    ['"other adult learners"', null, 'English Conversation Circle', 'Practice your English conversation skills with other adult learners.', ADULTS],
    ['"Older adults, join"', null, 'Fit & Fall Proof', 'Older adults, join this ongoing class to stay independent!', ADULTS],
    ['an intergenerational program stays', null, 'Grand Friends', 'Older adults and kids read together.', null],
  ]);
});

describe('adults only: the location is a taproom, pub or winery', () => {
  test('an event at a taproom with nothing for children', () => {
    assert.deepEqual(parseAges(null, 'Trivia Night with Head in the Clouds', null, "Reuben's Brews Taproom, 5010 14th Ave NW"), ADULTS);
    assert.deepEqual(parseAges(null, 'Magic Monday Casual Commander Night', 'Bring a deck.', 'Ravenna Brewing Co.'), ADULTS);
  });
  test('children named keep it a family event; a gym, a library lounge or a public library are no drinking place', () => {
    assert.deepEqual(parseAges(null, 'Family Day', 'Face painting for kids.', 'Stoup Brewing'), null);
    assert.equal(parseAges(null, 'Open Play', 'Climb and slide.', 'Monkey Bar Gym'), null);
    assert.equal(parseAges(null, 'Chess Club', 'Drop in and play.', 'Teen Lounge, Main Library'), null);
    assert.equal(parseAges(null, 'Chess Club', 'Drop in and play.', 'Public Library'), null);
  });
});

describe('not adults only: children welcome, or no adult sign at all', () => {
  cases([
    [
      'observed: "Family Open Mic Night … for musicians 18 and under"',
      null,
      'Family Open Mic Night',
      'An open mic for musicians 18 and under. Sign up at the door.',
      years(0, 18),
    ],
    ['"age 18 and under" is a child audience', null, 'Youth Open Mic', 'Open to performers age 18 and under.', years(0, 18)],
    ['"18 & younger"', null, 'Teen Jam', 'For players 18 & younger.', years(0, 18)],
    [
      'observed: "Pub Choir" says nothing of age or alcohol',
      null,
      'Pub Choir',
      'Sing along with hundreds of others: we teach a pop song in three-part harmony in one night.',
      null,
    ],
    ['"Bar Method" is a name', null, 'Bar Method Stretch', 'A low-impact stretch class.', null],
    ['"at Monkey Bar Gym" is not a bar', null, 'Open Play at Monkey Bar Gym', 'Climb and slide.', null],
    ['a pub named as the venue still is a sign', null, "Quiz Night at O'Malley's Pub", 'Teams of four.', ADULTS],
    [
      '"under 18 must be accompanied" opens the door to children',
      null,
      'Blues Jam',
      'Everyone must be 18 or older or accompanied by a parent or guardian.',
      null,
    ],
    ['an adult price tier is not a restriction', null, 'Harvest Festival', 'Adults (18+): $15, children $5.', null],
    ['"root beer tasting" is for children too', null, 'Root Beer Tasting', 'Try six craft sodas.', null],
    ['a price of "$21+" is no age', null, 'Gala Dinner', 'Tickets $21+ per person.', null],
    ['"12-18+" ends a teen range, it does not close the door', null, 'Teen Tech Week', 'For ages 12-18+.', years(12, 18)],
    ['a nude-colored ribbon is no nudity', null, 'Ribbon Craft', 'Bring nude colored ribbon. For kids ages 6-10.', years(6, 10)],
  ]);
});

describe('ages that are not the audience: prices, performers, other programs, names, topics', () => {
  cases([
    ['observed: "Kids 12 and under free" on a salsa night', null, 'Salsa Night', 'Live band and a free lesson at 7. $10 cover. Kids 12 and under free.', null],
    ['"kids under 5 free"', null, 'Harbor Cruise', 'Tickets $20, kids under 5 free.', null],
    ['"$5 children 3-12"', null, 'Pancake Breakfast', '$8 adults, $5 children 3-12.', null],
    ['"Children (3-12): $5" beside an adult price', null, 'Spaghetti Dinner', 'Adults: $12. Children (3-12): $5.', null],
    ['"free for children under 2"', null, 'Train Ride', 'All aboard! Free for children under 2.', null],
    ['"children under 2 are admitted free"', null, 'Museum Late', 'Children under 2 are admitted free.', null],
    ['"twelve and under free" (number words)', null, 'Concert in the Park', 'Kids twelve and under free.', null],
    ['"Kids under 15 years of age are free"', null, 'Indoor Plant Festival', 'Tickets are $15 at the door. Kids under 15 years of age are free.', null],
    ['an audience whose event is free keeps its range', null, 'Storytime', 'A storytime for ages 3-5 is always free.', years(3, 5)],
    ['"for kids 12 and under" in a free program keeps its range', null, 'Lego Build', 'This free program for kids 12 and under meets weekly.', years(0, 12)],
    ['a rule of entry is not the audience', null, 'Concert', 'All ages; children under 12 must be accompanied by an adult.', { kind: 'all' }],
    ["a lone price beside the audience is the event's own", null, 'Robotics Workshop', 'For ages 8-12: $120 per session.', years(8, 12)],
    [
      "observed: a theatre's actor training is not the audience of Cabaret",
      null,
      'Cabaret',
      'Willkommen! The Tony-winning musical returns. Our conservatory trains young actors ages 11–20 year-round.',
      null,
    ],
    ['"performed by students ages 8-14"', null, 'The Nutcracker', 'Performed by students ages 8-14 of the ballet school.', null],
    ['"a cast of kids ages 7-15"', null, 'Annie', 'A cast of kids ages 7-15 brings the musical to life.', null],
    ['"featuring young musicians ages 12-18"', null, 'Spring Concert', 'Featuring young musicians ages 12-18.', null],
    [
      '"artwork by students in grades 3-5" are the exhibitors',
      null,
      'Spring Student Art Show',
      'See artwork by students in grades 3-5 from local schools.',
      null,
    ],
    ['"hosted by teens ages 14-18" are the hosts', null, 'Game Night', 'Hosted by teen volunteers ages 14-18.', null],
    ['"led by a librarian for ages 3-5" is addressed after the leader', null, 'Storytime', 'A storytime led by a librarian for ages 3-5.', years(3, 5)],
    [
      '"a concert for kids ages 3-8 featuring songs" keeps its audience',
      null,
      'Concert',
      'A concert for kids ages 3-8 featuring songs about animals.',
      years(3, 8),
    ],
    [
      '"enrollment for our camps, ages 5-12" on another event',
      null,
      'Open House',
      'Tour the studio. Enrollment is open for our summer camps, ages 5-12.',
      null,
    ],
    ["a camp's own sentence about camps is its audience", null, 'Summer Art Camp', 'Our summer camps are for kids ages 5-12.', years(5, 12)],
    [
      '"parents of children ages 0-5" are the audience, not the children',
      null,
      'Positive Discipline Workshop',
      'A workshop for parents of children ages 0-5.',
      null,
    ],
    ['observed: "The Big Baby Tour" is a show\'s name', null, 'The Big Baby Tour', 'The hit touring show comes to town.', null],
    ['"Baby Shark Live!" is a name', null, 'Baby Shark Live!', 'Sing along with the hit show.', null],
    ['"Teen Titans Go!" is a name', null, 'Movie Matinee: Teen Titans Go! To the Movies', null, null],
    ['"Parenting Teens" is a topic', null, 'Parenting Teens in a Digital Age', 'A talk for parents.', null],
    ['"Baby Storytime" is still babies', null, 'Baby Storytime', null, months(0, 12)],
    ['"Baby & Me Yoga" is still babies', null, 'Baby & Me Yoga', null, months(0, 12)],
  ]);
});

describe('ranges read whole', () => {
  cases([
    ['observed: "Grades TK-3rd"', null, 'Homework Help (Grades TK-3rd)', null, years(4, 9)],
    ['"grades 1st-5th"', null, 'Chess Club', 'Grades 1st-5th.', years(6, 11)],
    ['"3rd-5th grade"', null, 'Book Club', 'For 3rd-5th grade readers.', years(8, 11)],
    ['"kindergarten through 2nd grade"', null, 'Reading Buddies', 'Kindergarten through 2nd grade.', years(5, 8)],
    ['"first through third grade" (number words)', null, 'Science Club', 'First through third grade.', years(6, 9)],
    ['"5th graders"', null, 'Math Circle', 'For 5th graders.', years(10, 11)],
    ['"grades 6 and up"', null, 'Coding', 'Grades 6 and up.', years(11, 18)],
    ['"(K-5)"', null, 'Art Club (K-5)', null, years(5, 11)],
    ['"K-9" is a police dog, not a grade', null, 'K-9 Unit Demo', 'Meet the K-9 team.', null],
    ['observed: "1 Month up to 2 Years"', null, 'Lapsit', 'For babies 1 Month up to 2 Years.', months(1, 35)],
    ['"6 months until 3 years"', null, 'Music Together', 'Children 6 months until 3 years.', months(6, 47)],
    ['"Ages: 6 - 12" with a colon', null, 'Craft', 'Ages: 6 - 12', years(6, 12)],
    ['"Age: 5+" with a colon', null, 'Craft', 'Age: 5+', years(5, 18)],
    ['"ages 3 and 4"', null, 'Pre-K Play', 'Ages 3 and 4.', years(3, 4)],
    ['"ages 3 & 4"', null, 'Pre-K Play', 'Ages 3 & 4.', years(3, 4)],
    ['"between the ages of 5 and 12"', null, 'Bike Rodeo', 'For children between the ages of 5 and 12.', years(5, 12)],
    ['"ages three to five" (number words)', null, 'Story Stretch', 'For ages three to five.', years(3, 5)],
    ['"six months to two years" (number words)', null, 'Baby Bounce', 'Six months to two years.', months(6, 35)],
    ['"under 18 years of age"', null, 'Youth Drop-in Chess', 'For Children and Teens under 18 years of age.', years(0, 17)],
    [
      '"from birth through elementary school"',
      null,
      'Story Time',
      'Children from birth through elementary school and their families can enjoy stories.',
      years(0, 11),
    ],
    ['"birth to 5"', null, 'Early Learning Play', 'For kids from birth to 5 and their caregivers.', years(0, 5)],
    ['Spanish "de 0 a 5 años"', null, 'La Hora de Cuentos Familiares', 'Los niños de 0 a 5 años y sus familias pueden disfrutar de historias.', years(0, 5)],
    [
      'school levels named are their union',
      null,
      'Spring Break: CRAFT-ernoon',
      'Elementary, middle school, and high school students: join our youth librarians for crafts!',
      years(5, 18),
    ],
    ['"middle and high school students"', null, 'Robotics', 'Middle and high school students build robots.', years(11, 18)],
    ['observed: "Baby and Toddler Storytime" is the union', null, 'Baby and Toddler Storytime', null, months(0, 47)],
    ['"Toddler & Preschool Storytime"', null, 'Toddler & Preschool Storytime', null, { kind: 'range', range: { min_months: 12, max_months: 71 } }],
    ['"for babies and toddlers" in a description', null, 'Rhyme Time', 'Songs and rhymes for babies and toddlers.', months(0, 47)],
    ['"Teens & Tweens"', null, 'Teens & Tweens Anime Club', null, years(9, 18)],
  ]);
});

// Gold set (test/fixtures/gold): each class of the items it got wrong, the observed item first
// (trimmed), then other wordings of the class, and what must stay as it is.
describe('adults only: an afterparty, training for a profession, a drink named in the title', () => {
  cases([
    [
      'observed: a conference afterparty with DJs',
      null,
      "Up After Dark - TailscaleUp's Official Afterparty",
      'Join Up attendees and Bay Area tech professionals at the historic Hibernia for “Up After Dark” - the official after party of TailscaleUp. We’re bringing the freshest DJs, funkiest house beats, tasty drinks and bites for a night to remember.',
      ADULTS,
    ],
    ['an "after-party" in the description', null, 'Spring Gala', 'Dinner, awards, and an after-party with a DJ until late.', ADULTS],
    ["a children's after-party stays", null, 'Costume Parade & After-Party', 'A parade for kids in costume, then cocoa and crafts.', null],
    [
      "observed: teachers' professional development",
      null,
      'Teacher Professional Development: Pop Culture & Activism',
      'From musicians who use songs as a call to action to photographers who use images as protest, pop culture plays a critical role in activism.',
      ADULTS,
    ],
    [
      "an educators' workshop with clock hours",
      null,
      'Teaching with Primary Sources',
      'An educator workshop on archives in the classroom. Earn 3 clock hours.',
      ADULTS,
    ],
    ['continuing-education credit', null, 'Summer Institute: Watershed Science', 'Participants earn continuing education credits.', ADULTS],
    ['a day when educators get in free is no training (labelled family)', null, 'Free Educator Day at MOPOP', 'Educators get in free with a valid ID.', null],
    [
      'office hours for instructors are no training (labelled family)',
      null,
      'Teaching Technologies Office Hours',
      'Drop in with questions about Canvas, Panopto and Zoom.',
      null,
    ],
    [
      "a library's job help is not adults only (labelled family)",
      null,
      'Job Interview Essentials',
      'Learn how to prepare for a job interview and answer common questions.',
      null,
    ],
    ['observed: "Women wheels and wine Ride" (no description)', null, 'Women wheels and wine Ride to Doffo', null, ADULTS],
    ['a beer release in the title', null, 'Hazy IPA Release Party', 'New beer on tap.', ADULTS],
    ['observed: a hashtag runs its words together', null, '#StoupBeerRunners', null, ADULTS],
    ['"Bourbon & Bluegrass"', null, 'Bourbon & Bluegrass', 'Live music on the patio.', ADULTS],
    ['"root beer" is no drink', null, 'Root Beer Float Social', 'Floats for everyone.', null],
    ['"wine country" is a region', null, 'Wine Country Trail Run', 'A 5K through the vineyards.', null],
    ['a drink in the title yields to children named', null, 'Wine & Cheese Family Picnic', 'Bring the kids: games and crafts.', null],
  ]);
});

describe('adults only: older adults, in English, Spanish and Chinese', () => {
  cases([
    [
      'observed: "Tailored for active older adults … Adults of all ages welcome"',
      null,
      'Zumba Toning *Online*',
      'Tailored for active older adults, who want to focus on muscle conditioning and light weight activity, Zumba Gold Toning blends low-intensity strength training with a fun party atmosphere. Dress comfortably and bring water. Adults of all ages welcome. Start anytime.',
      ADULTS,
    ],
    ['"grown-ups of all ages" are still grown-ups', null, 'Walking Club', 'A walking group for older adults. Grown-ups of all ages are welcome.', ADULTS],
    ['"adults of all ages" alone is no all-ages event', null, 'Line Dancing', 'Adults of all ages welcome.', null],
    ['older adults beside kids stay a family event', null, 'Zumba for Everyone', 'Kids, parents and older adults welcome.', null],
    [
      "observed: a seniors' (樂齡) tech meetup in Chinese",
      null,
      '健安樂齡科技坊',
      '來參加我們 的樂齡科技交流會，與我們 一起探索數位世界！活動以粵語和國語進行。',
      ADULTS,
    ],
    ['simplified Chinese 乐龄', null, '乐龄智能手机课', '学习使用智能手机。', ADULTS],
    ['長者 (elders) in a title', null, '長者太極班', null, ADULTS],
    ['Chinese adult minimum "18歲以上"', null, '品酒會', '只限18歲以上人士參加。', ADULTS],
    ['Chinese seniors beside children stay', null, '祖孫同樂', '歡迎長者和兒童一起參加。', null],
    ['Spanish "para adultos mayores"', null, 'Clase de ejercicio', 'Una clase para adultos mayores.', ADULTS],
    ['Spanish "solo para adultos, mayores de 21"', null, 'Noche de salsa', 'Solo para adultos, mayores de 21 años.', ADULTS],
    [
      'observed: open to all, elders encouraged (Spanish) is not adults only',
      null,
      'Charlas creativas en comunidad',
      'Este programa está al alcance de todos, sin embargo, se recomienda especialmente a las personas de la tercera edad que participen.',
      null,
    ],
  ]);
});

describe('not adults only: children\'s fare at a "happy hour", a figure-drawing class with no nude model', () => {
  cases([
    [
      'observed: "Cartoon Happy Hour" at a cinema (no description)',
      null,
      'Cartoon Happy Hour',
      'https://www.central-cinema.com/movie/cartoon-happy-hour',
      null,
    ],
    ['a puppet show at happy hour', null, 'Puppet Show Happy Hour', 'Marionettes at five.', null],
    ["a museum's happy hour is still a bar night", null, 'SAM Happy Hour', 'Drinks and live music in the galleries.', ADULTS],
    ['observed: figure drawing that says nothing of nudity', null, 'SAM Creates: Figure Drawing', 'art making, workshops', null],
  ]);
});

describe("a taproom's morning or its market is no night out", () => {
  const brewery = 'Ravenna Brewing Company, 5408 26th Ave NE, Seattle, WA, 98105';
  const at = (title: string, place: string, hour: number | null): AgeVerdict | null => parseAges(null, title, null, place, hour);
  test('observed: an adoption meet at noon and a plant-start sale at 11 at a brewery', () => {
    assert.equal(at('ADOPTABLE DOG MEET-N-GREET WITH DOG GONE SEATTLE', brewery, 12), null);
    assert.equal(at('VEGGIE, HERB, AND FLOWER START SALE WITH RAVENNA GARDENS', brewery, 11), null);
  });
  test('other markets, sales and drives by day, or with no time given', () => {
    assert.equal(at('Holiday Makers Market', "Drake's Brewing Co., San Leandro", 14), null);
    assert.equal(at('Pet Adoption Day', 'Russian River Brewing Company', null), null);
    assert.equal(at('Blood Drive', 'Fieldwork Brewing Berkeley', 13), null);
  });
  test('a morning that names no drink or night', () => {
    assert.equal(at('Saturday Morning Yoga', 'Trailbend Taproom', 9), null);
    assert.equal(at('Pumpkin Carving at Murphy’s Pub', "Murphy's Pub 1928 N 45th St, Seattle, WA", 11), null);
  });
  test('evenings, drinking words and a time before 7 (an evening written without "pm") stay a night out', () => {
    assert.deepEqual(at('Magic Monday Casual Commander Night', "Reuben's Brews Taproom", 18), ADULTS);
    assert.deepEqual(at('Makers Market', "Reuben's Brews Taproom", 18), ADULTS);
    assert.deepEqual(at('Sunday Brunch', 'The Dubliner Pub', 10), ADULTS);
    assert.deepEqual(at('Trivia', 'Trailbend Taproom', null), ADULTS);
    assert.deepEqual(at('SAIS Washington DC Mappy Hour', 'The Midlands Beer Garden, Washington, DC', 5), ADULTS);
    assert.deepEqual(at('#StoupBeerRunners', 'Stoup Brewing Ballard', 11), ADULTS);
  });
});

describe('ages: teens beside adults, Chinese ranges', () => {
  cases([
    [
      'observed: "Adults and teenagers welcome" is no teen program',
      null,
      'Carkeek STARS Work Party',
      'Join other enthusiastic volunteers for a fun morning of forest restoration and trails maintenance. Adults and teenagers welcome.',
      null,
    ],
    ['"for teens and adults"', null, 'Knitting Circle', 'A relaxed circle for teens and adults.', null],
    ['"teens and their parents" is still teens', null, 'College Prep Night', 'For teens and their parents.', years(13, 18)],
    ['"toddlers and adults" is toddlers with their grown-ups', null, 'Music & Movement', 'For toddlers and adults together.', months(12, 47)],
    [
      'observed: "从0岁到小学生" (from birth to primary school)',
      null,
      '普通话故事会 / 國語故事會',
      '在故事会，各年龄层的孩子（从0岁到小学生）和他们的家庭都可以一起享受故事、歌曲和有趣的学习活动。',
      years(0, 11),
    ],
    ['"3至5歲"', null, '粵語故事時間', '適合3至5歲兒童。', years(3, 5)],
    ['"0-5岁"', null, '亲子阅读', '适合0-5岁的孩子和家长。', years(0, 5)],
  ]);
});
