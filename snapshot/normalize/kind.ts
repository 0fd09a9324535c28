import { fold } from '../../core/text.ts';
// Calendar items that are not events: a calendar is also where an organizer posts that it is closed,
// that a room is booked privately, that applications are due, its shop's opening hours, a giving day,
// or a test entry. None of them is something a family can go to, so the pipeline drops them
// (`not_an_event`). Only the clear shapes of each notice: serving a closure costs a parent a glance,
// dropping a family event costs them the event, so every rule errs toward keeping the item.
// A cancelled event is an event (is_canceled), never a notice: the cancel marker is gone from the
// title before this reads it. Works on folded text (text.ts fold).

export type NoticeKind = 'closure' | 'private' | 'deadline' | 'digest' | 'hours' | 'campaign' | 'placeholder' | 'holiday';

const WEEKDAY = String.raw`(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:days?)?`;
// An alternation without its group: it is only ever one alternative among others.
const MONTH = String.raw`jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?`;
// Where a title's own phrase ends: its end, or punctuation that starts another part of it.
const END_ALT = String.raw`\s*$|\s*[-–—:|()[\],.!/;]`;
const END = `(?:${END_ALT})`;

// A place that closes: "Library Closed", "All branches are closed", "We're closed".
const FACILITY = String.raw`(?:librar(?:y|ies)|branch(?:es)?|locations?|offices?|museums?|galler(?:y|ies)|cent(?:er|re)s?|parks?|pools?|buildings?|facilit(?:y|ies)|campus|schools?|stores?|shops?|venues?|theat(?:er|re)s?|cinemas?|zoo|gardens?|trails?|playgrounds?|rinks?|aquarium|clubhouse|studio|we|we're|we are|everything)`;

// "Closed captioning", "closed-door": the word, not a closure.
const CLOSURE_WORDS = /\bclosed[\s-]?(?:caption(?:ed|ing|s)?|doors?|loop|circuit)\b/g;
const CLOSURE: readonly RegExp[] = [
  // "Closed for Holiday", "CLOSED Sunday and Monday", "Closed: Thanksgiving", "Closed to the public",
  // but not "Closed Captioned Screening" or "Closed Loop" (a band): only what a closure goes on to say.
  new RegExp(
    String.raw`^\W{0,4}closed(?:${END_ALT}|\s?@|\s+(?:for|on|today|tonight|tomorrow|all|through|thru|until|till|due|in (?:observance|honou?r|recognition)|this|early|at|to (?:the )?public|${WEEKDAY}|${MONTH}|holidays?)\b|\s+\d)`,
  ),
  // "Main Library Closed", "All locations are closed", "Memorial Day - Library will be closed".
  new RegExp(
    String.raw`\b${FACILITY}\s(?:(?:is|are|will be|remains?|to be|temporarily|currently)\s)?closed\b(?!\s?-?\s?(?:caption|door|loop|circuit|session|meeting|beta|group|workshop|to (?:cars|traffic|vehicles)))`,
  ),
  // "Memorial Day Weekend – Closed Monday": the same after a separator (an event named there keeps it).
  new RegExp(String.raw`[-–—:|([]\s?closed\s(?:for|on|today|tonight|tomorrow|all day|through|thru|until|till|in observance|${WEEKDAY}|${MONTH})\b`),
  // "Memorial Day - Closed", "Thanksgiving (Closed)".
  /[-–—:|([]\s{0,3}closed\W{0,3}$/,
  /\((?:library |museum |office |branch |park )?closed\)/,
  /\b(?:clos(?:es|ing)|shut(?:s|ting)?) early\b|\bearly (?:closure|closing|dismissal)\b|\bcloses at \d/,
  /\bdelayed opening\b|\bopen(?:s|ing) (?:late|delayed)\b/,
];

// "No Storytime Today", "Winter Break - No School", "No Pack Meeting": the absence of a program. Not
// "No School Day Camp" (a camp on a day off school): only where the title's phrase ends or says when.
const NO_PROGRAM = String.raw`no\s(?:school|class(?:es)?|story\s?times?|programs?|programming|(?:(?:pack|den|troop|club|board|group|regular)\s)?meetings?|practices?|lessons?|rehearsals?|events?|activities|office hours|services)`;
const NO_PROGRAM_NOTICE = new RegExp(
  String.raw`(?:^|[-–—:|(,]\s?)\W{0,3}${NO_PROGRAM}(?=${END_ALT}|\s(?:today|tonight|this|on|due|for|until|through|thru|scheduled|held)\b)`,
);
const NO_PROGRAM_ANY = new RegExp(String.raw`\b${NO_PROGRAM}\b`, 'g');
const STAFF_ONLY = /\bstaff\s(?:meeting|training|development|in-?service)s?\b/g;

// A thing one attends. Where a notice's words sit beside one ("Road Closure for the 5K Race", "Holiday
// Hours Open House", "Scholarship Application Workshop"), the item is the event, not the notice.
const EVENT_NOUN =
  /\b(?:workshops?|class(?:es)?|sessions?|clinics?|webinars?|seminars?|lectures?|talks?|tours?|camps?|part(?:y|ies)|celebrations?|ceremon(?:y|ies)|festivals?|fairs?|concerts?|shows?|screenings?|films?|movies?|performances?|readings?|story\s?times?|meetings?|meetups?|info(?:rmation)?|orientations?|q\s?&\s?a|help|hikes?|walks?|runs?|races?|markets?|sales?|bazaars?|open house|parades?|games?|trivia|crafts?|labs?|launch|kick-?offs?|storytelling|sing-?alongs?|play(?:group)?s?|reception|exhibit(?:ion)?s?|lessons?)\b/;

// "Private Rental Event", "Private Party", "Closed for a private event", "Gym Rental".
const PRIVATE: readonly RegExp[] = [
  /^\W{0,3}private\s(?:events?|part(?:y|ies)|rentals?|bookings?|functions?|reservations?|engagements?|gatherings?)\b/,
  /\b(?:closed|reserved|booked|rented)\s(?:for|to)\s(?:an?\s)?private\s(?:events?|part(?:y|ies)|functions?|rentals?|bookings?|groups?)\b/,
  /[-–—:|(]\s{0,3}private(?:\s(?:events?|part(?:y|ies)|rentals?|bookings?|functions?))?\W{0,3}$/,
  new RegExp(
    String.raw`^(?:(?:facility|venue|room|hall|space|gym(?:nasium)?|pool|field|shelter|picnic (?:area|shelter)|court|rink|auditorium|studio|building)\s)?(?:rentals?|rented|reserved|reservations?|bookings?|booked)${END}`,
  ),
];

// Dates of a process, not a gathering: "Registration Deadline", "Applications Now Open", "Last day
// to drop classes". An event about applying ("Application Workshop", "FAFSA Help Session") stays.
const DEADLINE: readonly RegExp[] = [
  /\bdeadlines?\b/,
  /\bapplications?\s(?:(?:are|is)\s)?(?:now\s)?(?:open|opens|opened|available|due|closes?|closing|accepted|period|window)\b/,
  /\b(?:registration|enroll?ment|sign-?ups?|submissions?|nominations?)\s(?:(?:is|are)\s)?(?:now\s)?(?:open|opens|closes?|closing|due|ends?)\b/,
  /\b(?:applications?|forms?|submissions?|entries|nominations?|payments?|fees?|rsvps?|registrations?|proposals?|essays?|ballots?)\s(?:(?:are|is)\s)?due\b/,
  /\blast day (?:to|for)\s(?:register|registration|apply|enroll?|submit|sign up|drop|withdraw|add|pay|vote|return|order)\b/,
  /\b(?:now\s)?accepting\s(?:applications|submissions|nominations|entries|registrations|proposals)\b/,
  /\b(?:open\s)?call\sfor\s(?:artists|entries|submissions|proposals|papers|applications|nominations|vendors|performers|musicians|art(?:work)?)\b/,
  /^(?:apply|register|enroll?|sign up|submit)\s(?:now\s)?(?:by|before)\b/,
];
const APPLIED_FOR = /\b(?:camps?|class(?:es)?|programs?|lessons?|sessions?)\b/g;
const ABOUT_APPLYING =
  /\b(?:workshops?|sessions?|clinics?|webinars?|seminars?|help|info(?:rmation)?|orientations?|labs?|q\s?&\s?a|assistance|support|tips|how to|drop-?in|office hours|meetings?)\b/;

// A news digest named for its period: "ArtSci Roundup: April", "Weekly Newsletter". Not "Reptile
// Roundup" (a program), nor a round-up that is a rodeo: only with a period beside it.
const DIGEST = /\b(?:round-?up|newsletter|digest|bulletin|e-?news)\b/;
const PERIOD = new RegExp(String.raw`\b(?:${MONTH}|week(?:ly)?|month(?:ly)?|daily|quarterly|spring|summer|fall|autumn|winter|\d{4})\b`);

// Opening hours: "Holiday Hours", "Hours of Operation", "Library Hours". Not "Office Hours" (a lawyer
// or a tutor at the library is an event), "After Hours", "Sensory-Friendly Hours", "Adoption Hours".
const HOLIDAY_DAY = String.raw`(?:thanksgiving|christmas(?: eve| day)?|new year'?s?(?: eve| day)?|easter|memorial day|labor day|independence day|(?:fourth|4th) of july|july (?:fourth|4th)|juneteenth|veterans'? day|presidents'? day)`;
const HOURS: readonly RegExp[] = [
  new RegExp(String.raw`\b${HOLIDAY_DAY}\shours\b`),
  // "Christmas Eve - Open 10am-6pm": a day's opening hours, and nothing else.
  new RegExp(
    String.raw`^${HOLIDAY_DAY}\W{1,4}open\s(?:from\s)?\d{1,2}(?::\d\d)?\s?(?:[ap]\.?m\.?)?\s?(?:[-–—]|to|until|till)\s?\d{1,2}(?::\d\d)?\s?(?:[ap]\.?m\.?)?\W{0,3}$`,
  ),
  /\b(?:holiday|summer|winter|fall|autumn|spring|modified|reduced|limited|regular|business|operating|opening|adjusted|new|temporary|store|shop|library|branch|building)\shours\b/,
  /\bhours of operation\b/,
];
// A shop as a calendar entry: "Online Store", "Museum Store", "Surplus Public Store" (its hours).
const STORE: readonly RegExp[] = [/\b(?:online|web)\s(?:store|shop)\b/, /\b(?:public|surplus|thrift|gift|museum|retail|campus|book)\s(?:store|shop)\W{0,3}$/];
// A shop that is itself the event: a kids' holiday gift shop, a pop-up.
const SHOP_EVENT = /\b(?:pop-?\s?up|holiday|santa'?s?|kids'?|children'?s|christmas|secret)\b/;

// An online giving day is a campaign, not a gathering: "GiveBIG 2026", "#GivingTuesday". Only the
// campaign's name (and a year), so that "#GivingTuesday special mapathon" stays.
const CAMPAIGN = /^\W{0,3}(?:give\s?big|giving\s?tuesday|give\s?out\s?day|(?:big\s)?day\sof\sgiving)[\s\d!.:–—-]{0,12}$/;

// A test or placeholder entry: "Test Event", "TBA", "Do not delete"; "<word> Test" with nothing else
// said, but not a test people sit ("Practice Test", "Hearing Test").
const PLACEHOLDER: readonly RegExp[] = [
  /^\W{0,3}(?:test(?:ing)?(?:\s(?:event|entry|post|item|listing|calendar|only|please ignore|\d{1,4}))*|placeholder|tb[ad]|to be (?:announced|determined)|do not (?:delete|use|publish)|please ignore|untitled(?:\sevent)?|dummy(?:\sevent)?|sample event)\W{0,3}$/,
  /\b(?:do not (?:delete|publish)|please ignore|test (?:event|entry|post) only)\b/,
];
const BARE_TEST = /^\W{0,3}[\p{L}\p{N}'’-]{1,30}\stest\W{0,3}$/u;
const SAT_TEST = /\b(?:practice|placement|taste|hearing|vision|eye|swim|swimming|driving|covid|hiv|blood|water|soil|radon|fitness|reading|citizenship)\stest/;

// An institution's holiday as a calendar entry: "City Holiday: Memorial Day", "[Not a public holiday]".
const HOLIDAY_PREFIX =
  /^(?:city|county|state|federal|public|legal|bank|national|office|staff|company|university|college|campus|district|school)\sholiday(?:\s?(?:observed|closure))?(?:\s*$|\s?[:(–—-])/;
// An academic term's break is the calendar's marker, whatever the text says: "Quarter Break - Summer 2026".
const TERM_BREAK =
  /^(?:quarter|semester|term|trimester|mid-?term|inter-?session)(?:\s(?:break|recess))?(?:\s?[-–—:]?\s?(?:(?:spring|summer|fall|autumn|winter)\s)?\d{4})?\W{0,3}$/;
const HOLIDAY_MARK = /[[(](?:not a )?(?:public|bank|federal|national|legal) holiday[\])]/;
// A title that is only a holiday's (or a break's) name: the entry of an academic or office calendar,
// when its text says that nothing happens ("No classes. Most offices are closed."). A celebration
// named for the day says what it is ("Juneteenth Festival") or describes itself otherwise.
const HOLIDAY_NAME =
  /^(?:new year'?s?(?: day| eve)?|(?:dr\.? )?(?:martin luther king(?: jr\.?)?|mlk)(?: jr\.?)?(?: day)?|presidents'? day|washington'?s birthday|lincoln'?s birthday|cesar chavez day|memorial day|juneteenth|independence day|fourth of july|4th of july|labor day|columbus day|indigenous peoples'? day|veterans'? day|thanksgiving(?: day| break| holiday| recess)?|day after thanksgiving|native american heritage day|christmas(?: day| eve)?|(?:winter|spring|fall|holiday) (?:break|recess)|winter holidays?)(?:\s?\((?:observed|holiday)\)|\s(?:holiday|observed|observance))?(?:\s\d{4})?\W{0,3}$/;
const SAYS_CLOSED =
  /\b(?:is|are|will be|remains?)\sclosed\b(?!\sto\s(?:cars|traffic|vehicles))|\bclosed\s(?:in observance|in honou?r|for the (?:holiday|day))\b|\bno\s(?:classes|school)\b/;

/** Why an item is a notice and not an event, or null when it may be an event. */
export function noticeKind(title: string, description: string | null = null): NoticeKind | null {
  const t = fold(title).replace(/[‘’`´]/g, "'");
  if (t === '') return null;
  // The event nouns of a notice's own phrase ("No Storytime", "for a staff meeting") say nothing of
  // another event.
  const rest = t.replace(NO_PROGRAM_ANY, ' ').replace(STAFF_ONLY, ' ');
  const names = (re: RegExp): boolean => re.test(rest);

  if (PRIVATE.some((re) => re.test(t)) && !/\bfully booked\b/.test(t)) return 'private';
  const tc = t.replace(CLOSURE_WORDS, ' ');
  // A closure of the place, not of one program in it ("Museum closed: members' tour" is the tour),
  // unless the title opens with it ("Closed for a private event").
  if (CLOSURE.some((re) => re.test(tc)) && (!names(EVENT_NOUN) || /^\W{0,4}closed\b/.test(tc))) return 'closure';
  if (NO_PROGRAM_NOTICE.test(t)) return 'closure';
  if (/\bclosures?\b/.test(t) && !names(EVENT_NOUN)) return 'closure';

  // What one applies or registers for ("Summer Camp", "Fall Classes") is no event on this date.
  if (DEADLINE.some((re) => re.test(t)) && !ABOUT_APPLYING.test(t) && !EVENT_NOUN.test(rest.replace(APPLIED_FOR, ' '))) return 'deadline';

  if (DIGEST.test(t) && PERIOD.test(t) && !names(EVENT_NOUN)) return 'digest';

  if (HOURS.some((re) => re.test(t)) && !names(EVENT_NOUN)) return 'hours';
  if (STORE.some((re) => re.test(t)) && !names(EVENT_NOUN) && !SHOP_EVENT.test(t)) return 'hours';

  if (CAMPAIGN.test(t)) return 'campaign';

  if (PLACEHOLDER.some((re) => re.test(t))) return 'placeholder';
  if (BARE_TEST.test(t) && !SAT_TEST.test(t) && (description ?? '').trim() === '') return 'placeholder';

  if (HOLIDAY_PREFIX.test(t) || HOLIDAY_MARK.test(t) || TERM_BREAK.test(t)) return 'holiday';
  if (HOLIDAY_NAME.test(t) && description !== null && SAYS_CLOSED.test(fold(description))) return 'holiday';
  return null;
}
