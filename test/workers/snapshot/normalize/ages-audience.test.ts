// Issue 25: ages and adults-only on real feeds the normalizer had never seen. Each observed failure
// is quoted (trimmed) first, then other wordings of the same defect, so that the class is fixed and
// not the example.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseAges, type AgeVerdict } from '../../../../workers/snapshot/normalize/ages.ts';

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
    ['observed: figure drawing "from a nude model" (once read as 12–23 months)', null, 'Open Studio: Figure Drawing',
      'Drop-in figure drawing session. Draw from a nude model in 1, 5 and 20 minute poses. Babies 12-23 months are not our audience.', ADULTS],
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
    ['observed: "Family Open Mic Night … for musicians 18 and under"', null, 'Family Open Mic Night',
      'An open mic for musicians 18 and under. Sign up at the door.', years(0, 18)],
    ['"age 18 and under" is a child audience', null, 'Youth Open Mic', 'Open to performers age 18 and under.', years(0, 18)],
    ['"18 & younger"', null, 'Teen Jam', 'For players 18 & younger.', years(0, 18)],
    ['observed: "Pub Choir" says nothing of age or alcohol', null, 'Pub Choir', 'Sing along with hundreds of others: we teach a pop song in three-part harmony in one night.', null],
    ['"Bar Method" is a name', null, 'Bar Method Stretch', 'A low-impact stretch class.', null],
    ['"at Monkey Bar Gym" is not a bar', null, 'Open Play at Monkey Bar Gym', 'Climb and slide.', null],
    ['a pub named as the venue still is a sign', null, 'Quiz Night at O\'Malley\'s Pub', 'Teams of four.', ADULTS],
    ['"under 18 must be accompanied" opens the door to children', null, 'Blues Jam', 'Everyone must be 18 or older or accompanied by a parent or guardian.', null],
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
    ['a lone price beside the audience is the event\'s own', null, 'Robotics Workshop', 'For ages 8-12: $120 per session.', years(8, 12)],
    ['observed: a theatre\'s actor training is not the audience of Cabaret', null, 'Cabaret',
      'Willkommen! The Tony-winning musical returns. Our conservatory trains young actors ages 11–20 year-round.', null],
    ['"performed by students ages 8-14"', null, 'The Nutcracker', 'Performed by students ages 8-14 of the ballet school.', null],
    ['"a cast of kids ages 7-15"', null, 'Annie', 'A cast of kids ages 7-15 brings the musical to life.', null],
    ['"featuring young musicians ages 12-18"', null, 'Spring Concert', 'Featuring young musicians ages 12-18.', null],
    ['"artwork by students in grades 3-5" are the exhibitors', null, 'Spring Student Art Show', 'See artwork by students in grades 3-5 from local schools.', null],
    ['"hosted by teens ages 14-18" are the hosts', null, 'Game Night', 'Hosted by teen volunteers ages 14-18.', null],
    ['"led by a librarian for ages 3-5" is addressed after the leader', null, 'Storytime', 'A storytime led by a librarian for ages 3-5.', years(3, 5)],
    ['"a concert for kids ages 3-8 featuring songs" keeps its audience', null, 'Concert', 'A concert for kids ages 3-8 featuring songs about animals.', years(3, 8)],
    ['"enrollment for our camps, ages 5-12" on another event', null, 'Open House', 'Tour the studio. Enrollment is open for our summer camps, ages 5-12.', null],
    ['a camp\'s own sentence about camps is its audience', null, 'Summer Art Camp', 'Our summer camps are for kids ages 5-12.', years(5, 12)],
    ['"parents of children ages 0-5" are the audience, not the children', null, 'Positive Discipline Workshop', 'A workshop for parents of children ages 0-5.', null],
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
    ['"from birth through elementary school"', null, 'Story Time', 'Children from birth through elementary school and their families can enjoy stories.', years(0, 11)],
    ['"birth to 5"', null, 'Early Learning Play', 'For kids from birth to 5 and their caregivers.', years(0, 5)],
    ['Spanish "de 0 a 5 años"', null, 'La Hora de Cuentos Familiares', 'Los niños de 0 a 5 años y sus familias pueden disfrutar de historias.', years(0, 5)],
    ['school levels named are their union', null, 'Spring Break: CRAFT-ernoon', 'Elementary, middle school, and high school students: join our youth librarians for crafts!', years(5, 18)],
    ['"middle and high school students"', null, 'Robotics', 'Middle and high school students build robots.', years(11, 18)],
    ['observed: "Baby and Toddler Storytime" is the union', null, 'Baby and Toddler Storytime', null, months(0, 47)],
    ['"Toddler & Preschool Storytime"', null, 'Toddler & Preschool Storytime', null, { kind: 'range', range: { min_months: 12, max_months: 71 } }],
    ['"for babies and toddlers" in a description', null, 'Rhyme Time', 'Songs and rhymes for babies and toddlers.', months(0, 47)],
    ['"Teens & Tweens"', null, 'Teens & Tweens Anime Club', null, years(9, 18)],
  ]);
});
