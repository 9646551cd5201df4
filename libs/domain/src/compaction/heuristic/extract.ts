/**
 * Structure-based extraction for the summary record: paths, URLs,
 * identifiers, code spans, numbers with units, quoted strings, locations,
 * checklists and todo-tool lists are found by their shape, whatever the
 * language around them. The few word lists (constraint, decision, fix and
 * revocation cues; filler) cover several languages and only classify what a
 * message's sentences are, never whether a fact is kept.
 *
 * Every function here is linear in its input: texts are split once, each
 * token or line is tested by anchored patterns without nested quantifiers,
 * and long lines are clipped before any pattern runs.
 */

/** Code points of `text`, clipped with an ellipsis; whitespace runs become one space. */
export function clipText(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const points = Array.from(flat);
  return points.length <= max ? flat : `${points.slice(0, max - 1).join('')}…`;
}

/** Head and tail of a long text (line breaks kept), with a marker of what went. */
export function clipMiddle(text: string, max: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= max) return trimmed;
  const points = Array.from(trimmed);
  if (points.length <= max) return trimmed;
  const head = Math.ceil((max * 2) / 3);
  const tail = Math.max(0, max - head);
  return `${points.slice(0, head).join('')} … ${points.slice(points.length - tail).join('')}`;
}

/** Whitespace-insensitive form used to compare texts and to find facts in a summary. */
export const normalizeSpace = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * Sentences: split at line breaks, at `.!?;` followed by a space, after CJK and Arabic terminators, and before
 * Spanish `¿¡` that follow a terminator directly.
 */
export function sentencesOf(text: string): string[] {
  return text
    .split(/\n+|(?<=[.!?;])\s+|(?<=[。！？；؟])|(?<=[.!?;])(?=[¿¡])/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length >= 2);
}

// ---------------------------------------------------------------- cue words

/**
 * Words delimited by non-letters (Latin, Cyrillic, Arabic…); a hyphen joins a
 * word part (`non-blocking`, `no-op` hold no cue); `[وف]?` lets Arabic's
 * clitic "and"/"so" prefix them.
 */
function wordCues(words: readonly string[], arabic: readonly string[] = []): RegExp {
  const latin = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s+')).join('|');
  const parts = [`(?<![\\p{L}\\p{N}-])(?:${latin})(?![\\p{L}\\p{N}-])`];
  if (arabic.length > 0) parts.push(`(?<![\\p{L}])[وف]?(?:${arabic.join('|')})(?![\\p{L}])`);
  return new RegExp(parts.join('|'), 'iu');
}

/** Scripts written without spaces: a cue is a plain substring. */
const plainCues = (words: readonly string[]) => new RegExp(words.join('|'));

const CONSTRAINT_WORDS = wordCues(
  [
    // English
    'must', 'must not', "mustn't", 'never', 'always', 'do not', "don't", 'dont', 'should', "shouldn't", 'prefer', 'avoid',
    'only', 'without', 'make sure', 'ensure', 'keep', 'stick to', 'no more than', 'at most', 'at least', 'required',
    'forbidden', 'not allowed', 'no', 'instead of', 'under no circumstances',
    // German
    'nie', 'niemals', 'immer', 'nicht', 'kein', 'keine', 'muss', 'müssen', 'nur', 'ohne', 'darf nicht',
    'dürfen nicht', 'verwende', 'verwenden', 'benutze', 'benutzen', 'nutze', 'vermeide', 'sollte', 'soll', 'stets',
    'höchstens', 'mindestens', 'ausschließlich',
    // French
    'jamais', 'toujours', 'ne', 'pas', 'doit', 'dois', 'doivent', 'seulement', 'uniquement', 'sans', 'il faut',
    'utilise', 'utilisez', 'évite', 'évitez', 'interdit', 'au plus', 'au moins',
    // Spanish
    'nunca', 'siempre', 'debe', 'debes', 'deben', 'solo', 'sólo', 'sin', 'usa', 'usar', 'utiliza', 'evita', 'hay que',
    'tienes que', 'prohibido', 'como máximo', 'al menos', 'mantén',
    // Portuguese
    'sempre', 'não', 'deve', 'apenas', 'somente', 'sem', 'precisa', 'utilize', 'evite', 'proibido', 'no máximo',
    'pelo menos',
    // Italian
    // "Please" words are politeness, not constraints.
    'non', 'mai', 'devi', 'devono', 'soltanto', 'bisogna', 'vietato', 'almeno', 'al massimo',
    // Russian
    'нельзя', 'не', 'никогда', 'всегда', 'только', 'обязательно', 'должен', 'должна', 'должно', 'должны', 'следует',
    'запрещено', 'избегай', 'избегать', 'сохраняй', 'без', 'нужно', 'надо',
  ],
  ['لا', 'يجب', 'ينبغي', 'دائما', 'دائمًا', 'أبدا', 'أبدًا', 'فقط', 'ممنوع', 'يمنع', 'يُمنع', 'تجنب', 'بدون', 'احرص', 'لازم', 'عدم', 'إياك'],
);
const CONSTRAINT_PLAIN = plainCues([
  '必须', '不要', '别', '不能', '不得', '禁止', '只能', '只用', '总是', '始终', '永远', '务必', '一定要', '保持', '避免', '请勿',
  '不准', '不许', '应该', '不可', '勿', // Chinese
  'ないで', 'しないで', 'してはいけない', '必ず', '常に', '絶対', 'だけ', 'のみ', '禁止', 'ないこと',
  'べき', '使って', '使用', // Japanese
]);

const DECISION_WORDS = wordCues(
  [
    'because', 'since', 'so that', 'therefore', 'thus', 'hence', 'decided', 'decide', 'decision', 'chose', 'choose',
    'chosen', 'will use', 'going with', 'go with', 'instead of', 'rather than', 'switched to', 'switch to', 'the cause',
    'root cause', 'caused by', 'due to', 'the problem is', 'the issue is', 'the bug is', 'the error is', 'turns out',
    'conclusion', 'diagnosis', 'approach', 'trade-off', 'tradeoff', 'opted', 'the fix is', 'which means', 'means that',
    'weil', 'deshalb', 'daher', 'stattdessen', 'ursache', 'entschieden', 'parce que', 'donc', 'décidé', 'au lieu de',
    'porque', 'por eso', 'decidí', 'decidimos', 'en lugar de', 'em vez de', 'perché', 'quindi', 'invece di', 'abbiamo deciso',
    'потому что', 'так как', 'поэтому', 'решил', 'решила', 'решили', 'выбрал', 'выбрали', 'причина', 'проблема в',
    'из-за', 'вместо', 'вывод', 'используем', 'будем использовать', 'значит',
  ],
  ['لأن', 'لان', 'لذلك', 'بسبب', 'قررت', 'قررنا', 'قرار', 'اخترت', 'اخترنا', 'السبب', 'المشكلة', 'بدلا', 'بدلاً', 'سنستخدم', 'سأستخدم', 'الاستنتاج'],
);
const DECISION_PLAIN = plainCues([
  '因为', '所以', '因此', '决定', '选择', '选用', '原因', '问题是', '问题在于', '根本原因', '导致', '改用', '而不是', '结论', '由于', // Chinese
  'なので', '決めた', '決定', '代わりに', 'ことにし', // Japanese
]);

const FIX_WORDS = wordCues(
  [
    'fixed', 'resolved', 'passes', 'passing', 'pass now', 'works now', 'now works', 'succeeded', 'green', 'no longer fails',
    'no longer failing', 'addressed', 'corrected', 'solved',
    'исправил', 'исправила', 'исправили', 'исправлено', 'исправлена', 'починил', 'починено', 'решено', 'проходит', 'проходят', 'работает',
  ],
  ['أصلحت', 'أصلحنا', 'إصلاح', 'حل', 'حللت', 'يعمل', 'نجح', 'نجحت'],
);
const FIX_PLAIN = plainCues(['修复', '修好', '解决', '已通过', '通过了']);

const REVOKE_WORDS = wordCues(
  [
    'no longer', 'ignore my', 'ignore the earlier', 'ignore the previous', 'forget what i said', 'forget about', 'forget the',
    'you can now', 'you may now', "it's fine to", 'it is fine to', 'feel free to', 'never mind', 'scratch that', 'disregard',
    'revoke', 'is allowed now', 'больше не', 'забудь про', 'забудь о', 'забудь что', 'отменяю', 'отмени', 'теперь можно', 'можно уже',
  ],
  ['لم يعد', 'انس ما', 'تجاهل', 'يمكنك الآن', 'لا داعي'],
);
const REVOKE_PLAIN = plainCues(['不再', '可以了', '忽略', '取消', '不用再', '不需要再', '现在可以']);

const NEXT_WORDS = wordCues(
  [
    'next', "then i'll", 'then i will', 'todo', 'to do', 'remaining', 'still need', 'still needs', 'will now', "i'll now",
    'plan to', 'afterwards', 'next step', 'next steps', 'after that', 'left to do',
    'дальше', 'затем', 'далее', 'следующий шаг', 'осталось', 'нужно ещё', 'потом',
  ],
  ['التالي', 'بعد ذلك', 'الخطوة التالية', 'سأقوم', 'المتبقي', 'ثم'],
);
const NEXT_PLAIN = plainCues(['下一步', '接下来', '然后', '还需要', '待办', '之后']);

const CUE_SCAN = 2_000;
const hasCue = (text: string, words: RegExp, plain: RegExp) => {
  const probe = text.length > CUE_SCAN ? text.slice(0, CUE_SCAN) : text;
  return words.test(probe) || plain.test(probe);
};

export const isConstraintSentence = (s: string) => hasCue(s, CONSTRAINT_WORDS, CONSTRAINT_PLAIN);
export const isDecisionSentence = (s: string) => hasCue(s, DECISION_WORDS, DECISION_PLAIN);
/** "Next I will run the migrations": what the assistant says it will do. */
export const isNextStep = (s: string) => hasCue(s, NEXT_WORDS, NEXT_PLAIN);
export const isFixStatement = (s: string) => hasCue(s, FIX_WORDS, FIX_PLAIN);
/** "Don't forget …" reminds rather than revokes. */
const REMINDER = /(?:don't|do not|never)\s+forget|не\s+забудь|لا\s+تنس/iu;
export const isRevocation = (s: string) => hasCue(s, REVOKE_WORDS, REVOKE_PLAIN) && !REMINDER.test(s);

// ---------------------------------------------------------------- filler

/** Words that only ask to go on; a message made of them alone (digits and punctuation aside) is filler. */
const FILLER_WORDS = new Set([
  'continue', 'continuing', 'keep', 'going', 'go', 'on', 'ahead', 'proceed', 'next', 'ok', 'okay', 'yes', 'y', 'sure', 'do',
  'it', 'carry', 'resume', 'working', 'work', 'lgtm', 'thanks', 'thank', 'you', 'great', 'good', 'nice', 'cool', 'k', 'yep',
  'yeah', 'done', 'at', 'with', 'step', 'steps', 'the', 'please', 'pls', 'now', 'then', 'to', 'and', 'from', 'same',
  'weiter', 'continuez', 'continúa', 'sigue', 'continua', 'продолжай', 'продолжайте', 'дальше', 'давай', 'ок', 'да',
  'хорошо', 'далее', 'продолжим', 'шаг', 'шагом', 'с', 'пожалуйста', 'к', 'تابع', 'استمر', 'نعم', 'حسنا', 'حسنًا', 'التالي',
  'واصل', 'أكمل', 'اكمل', 'خطوة', 'الخطوة', 'مع', 'من', 'فضلك', 'رجاء',
]);
/** The same for scripts without spaces: the whole message, once 第…步 and particles are stripped. */
const FILLER_PHRASES = new Set(['继续', '好', '好的', '可以', '是', '下一步', '继续下一步', '続けて', '次']);

/**
 * "Keep going with step 3", "继续", "продолжай": a short message that only
 * asks to go on. Not a constraint, not a request worth keeping.
 */
export function isFiller(text: string): boolean {
  if (text.length > 80) return false;
  const flat = text
    .toLowerCase()
    .replace(/第|步骤?|吧|。|请|[\p{P}\p{S}\p{N}]+/gu, ' ')
    .trim();
  if (flat === '' || FILLER_PHRASES.has(flat.replace(/\s+/g, ''))) return true;
  return flat.split(/\s+/).every((word) => FILLER_WORDS.has(word));
}

// ---------------------------------------------------------------- structural tokens

const FILE_EXTENSIONS = new Set(
  (
    'ts tsx js jsx mjs cjs json jsonc md mdx py pyi go rs java kt kts rb php c h cc cpp hpp cs swift m mm scala clj ex exs erl ' +
    'hs ml lua pl r jl dart zig nim yml yaml toml ini cfg conf sql sh bash zsh fish ps1 bat css scss sass less html htm vue ' +
    'svelte astro txt lock env xml gradle proto graphql gql tf tfvars hcl dockerfile csv tsv log diff patch ipynb rst adoc'
  ).split(' '),
);
const PATH_TOKEN = /^(?:~|\.{1,2})?\/?[\p{L}\p{N}\p{M}_@%+-][\p{L}\p{N}\p{M}_@%+.-]*(?:\/[\p{L}\p{N}\p{M}_@%+.-]+)*\/?$/u;
const ROOTED = /^(?:~|\.{1,2})?\//;
const EXTENSION = /\.([A-Za-z0-9]{1,10})$/;
const LOCATION_TOKEN = /^(.+?\.[A-Za-z0-9]{1,10}):(\d+)(?::(\d+))?$/;
const URL_PATTERN = /https?:\/\/[^\s<>"'`()[\]{}|\\^]+/g;
/**
 * What separates tokens: anything not a letter, digit or token punctuation, and scripts written without spaces
 * (Han, kana, Hangul, Thai), so `端口改成8443并且不要修改config.yaml` yields `8443` and `config.yaml`, while words
 * with any other letters stay whole (`berechneGebühr`, `Straße_ID`).
 */
const TOKEN_SPLIT = /[^\p{L}\p{N}\p{M}_@%+.\-/~:$#=\\]+|[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\u30fc]+/u;

/** A file path by its shape: a known extension, or a rooted path of two segments or more (not "and/or"). */
export function isPath(token: string): boolean {
  if (token.length < 3 || token.length > 300 || !PATH_TOKEN.test(token) || /^\d/.test(token)) return false;
  const extension = EXTENSION.exec(token)?.[1]?.toLowerCase();
  if (extension !== undefined && FILE_EXTENSIONS.has(extension)) return true;
  const lastSegment = token.slice(token.lastIndexOf('/') + 1).toLowerCase();
  if (['dockerfile', 'makefile', 'procfile', 'gemfile', 'rakefile', '.gitignore', '.env'].includes(lastSegment)) return true;
  return ROOTED.test(token) && token.includes('/', token.indexOf('/') + 1) && !token.endsWith('//');
}

// Letters of any cased script: `berechneGebühr`, `größeÄndern`, `calcularDescuentoAño`, `Straße_ID` are identifiers too.
const IDENTIFIER_SHAPES: readonly RegExp[] = [
  // One free split each: a repeated hump group backtracks exponentially on a long run of capitals (a base64 line).
  /^\p{Ll}[\p{Ll}\p{N}]*\p{Lu}[\p{L}\p{N}]*$/u, // camelCase
  /^\p{Lu}[\p{Ll}\p{N}]+\p{Lu}[\p{L}\p{N}]*$/u, // PascalCase with two humps
  /^_*\p{L}[\p{L}\p{N}]*(?:_[\p{L}\p{N}]+)+$/u, // snake_case, SCREAMING_CASE
  /^[A-Z]{2,}[0-9]*$/, // an acronym or a code: HTTP, E11000 is below
  /^[A-Z]+[0-9]{2,}$/, // E11000, TS2345
  /^[\p{L}_$][\p{L}\p{N}_$]*(?:(?:\.|::|->)[\p{L}_$][\p{L}\p{N}_$]*)+(?:\(\))?$/u, // qualified: a.b.c, Foo::bar
  /^[\p{L}_$][\p{L}\p{N}_$.]*\(\)$/u, // call()
  /^[A-Z][A-Z0-9]+-\d+$/, // ticket PROJ-123
  /^(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}$/, // commit hash
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, // uuid
  /^v?\d+\.\d+(?:\.\d+)+(?:[-+][\w.]+)?$/, // version 1.2.3
  /^v\d+(?:\.\d+)?$/, // v2, v2.1
  /^@?[\w.-]+(?:\/[\w.-]+)?@\d[\w.-]*$/, // package@1.2.3
  /^\$[A-Za-z_][A-Za-z0-9_]*$/, // $ENV
  /^--?[A-Za-z][\w-]*(?:=\S+)?$/, // --flag, --flag=value
  /^[\w.-]+:\d{2,5}$/, // host:port
  /^[A-Za-z_][\w.-]*=[^=\s]+$/, // key=value
];

const isIdentifier = (token: string) => token.length >= 3 && token.length <= 120 && IDENTIFIER_SHAPES.some((shape) => shape.test(token));

const UNIT =
  '%|°[CF]|ms|µs|ns|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|weeks?|kb|mb|gb|tb|kib|mib|gib|tib|b|bytes?|px|rem|em|pt|' +
  'tokens?|req/s|rps|qps|ops/s|x|k|cores?|cpus?|threads?|workers?|connections?|retries|attempts|times|ports?|rows|lines|items|' +
  'users|requests?|reqs?|rpm|calls?|messages?|records?|entries|jobs?|files?|chars?|characters?|' +
  'mbps|gbps|hz|khz|mhz|ghz|мс|с|сек|мин|ч|кб|мб|гб|тб|шт|раз|строк|порт|ثانية|ثوان|دقيقة|دقائق|ساعة|ميغابايت|بايت|مرة|مرات|بكسل';
/** Units of scripts without spaces: the text goes on right after them. */
const UNIT_CJK = '毫秒|秒|分钟|小时|天|个|次|行|条|兆|字节|像素|ミリ秒|秒|分|件|個';
const NUMBER = new RegExp(
  `(?<![\\p{L}\\p{N}_.\\-/:@=])(\\d+(?:[.,]\\d+)*)(?:\\s?(?:(${UNIT})(?![\\p{L}\\p{N}])|(${UNIT_CJK})))?(?![\\p{N}])`,
  'giu',
);

/** Numbers with a unit ("30 s", "512 MB", "8 个"), and bare ones of three digits or more or with a decimal point. */
export function numbersOf(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(NUMBER)) {
    const [whole, digits, unit, cjkUnit] = match;
    if (unit || cjkUnit || digits.replace(/\D/g, '').length >= 3 || /\d[.,]\d/.test(digits)) found.push(whole.trim());
  }
  return found;
}

const QUOTED = /"([^"\n]{2,200})"|(?<![\p{L}\p{N}])'([^'\n]{2,200})'(?![\p{L}\p{N}])|“([^”\n]{2,200})”|«([^»\n]{2,200})»|「([^」\n]{1,200})」|『([^』\n]{1,200})』|„([^“\n]{2,200})“/gu;
const CODE_SPAN = /`([^`\n]{1,200})`/g;

export function quotedOf(text: string): string[] {
  return [...text.matchAll(QUOTED)].map((m) => (m.slice(1).find((group) => group !== undefined) ?? '').trim()).filter(Boolean);
}

export function codeSpansOf(text: string): string[] {
  return [...text.matchAll(CODE_SPAN)].map((m) => m[1].trim()).filter((span) => span.length > 0);
}

export interface Structural {
  paths: string[];
  /** `path:line` as written, for errors and stack frames. */
  locations: string[];
  urls: string[];
  /** Identifiers, code spans, quoted strings, numbers with units: the key values of a text. */
  values: string[];
}

const CODE_DECLARATION =
  /^\s*(?:export\s+)?(?:default\s+)?(?:pub(?:\(crate\))?\s+)?(?:async\s+)?(?:function|class|interface|type|enum|struct|trait|impl|const|let|var|def|fn|func|module|package|import|from|CREATE\s+TABLE|ALTER\s+TABLE)\b/i;
const ASSIGNMENT = /^\s*[A-Za-z_$][\w$.]*\s*[:=]\s*\S/;

/** The declarations and assignments of fenced code blocks: what a block defines. */
function codeBlockFacts(text: string): string[] {
  if (!text.includes('```')) return [];
  const facts: string[] = [];
  let inside = false;
  for (const raw of text.split('\n')) {
    if (raw.trimStart().startsWith('```')) {
      inside = !inside;
      continue;
    }
    if (!inside) continue;
    const line = raw.length > 400 ? raw.slice(0, 400) : raw;
    if (CODE_DECLARATION.test(line) || ASSIGNMENT.test(line)) facts.push(clipText(line, 160));
  }
  return facts;
}

/** Paths, locations, URLs and key values of a text, each once, in order of appearance. */
export function structuralOf(text: string, options: { codeBlocks?: boolean } = {}): Structural {
  const paths = new Set<string>();
  const locations = new Set<string>();
  const urls = new Set<string>();
  const values = new Set<string>();
  for (const url of text.match(URL_PATTERN) ?? []) urls.add(url.replace(/[.,:;!?)]+$/, ''));
  const withoutUrls = urls.size > 0 ? text.replace(URL_PATTERN, ' ') : text;
  for (const raw of withoutUrls.split(TOKEN_SPLIT)) {
    const token = raw.replace(/^[:=(#]+/, '').replace(/[.,:;!?)=]+$/, '');
    if (token.length < 2) continue;
    const location = LOCATION_TOKEN.exec(token);
    if (location && isPath(location[1])) {
      locations.add(token);
      paths.add(location[1]);
    } else if (isPath(token)) {
      paths.add(token);
    } else if (isIdentifier(token)) {
      values.add(token);
    }
  }
  for (const span of codeSpansOf(text)) if (!paths.has(span)) values.add(span);
  for (const quoted of quotedOf(text)) values.add(quoted);
  for (const number of numbersOf(withoutUrls)) values.add(number);
  if (options.codeBlocks) for (const fact of codeBlockFacts(text)) values.add(fact);
  return { paths: [...paths], locations: [...locations], urls: [...urls], values: [...values] };
}

/** Whether a sentence states a fact by its shape, in any language: a digit, a path, a URL, an identifier, a code span or a quoted name. */
export function statesFact(sentence: string): boolean {
  if (/\p{N}/u.test(sentence)) return true;
  const found = structuralOf(sentence);
  return found.paths.length > 0 || found.urls.length > 0 || found.values.length > 0;
}

/** What a sentence is about: its structural tokens (paths, file names, identifiers, values) and its other words. */
export interface Salient {
  structural: Set<string>;
  words: Set<string>;
}

/** Salient tokens, for tying a fix to an error or a revocation to a constraint. Words inside paths and URLs do not count as words. */
export function salientTokens(text: string): Salient {
  const structural = new Set<string>();
  const words = new Set<string>();
  const probe = text.length > CUE_SCAN ? text.slice(0, CUE_SCAN) : text;
  const found = structuralOf(probe);
  for (const path of found.paths) {
    structural.add(path.toLowerCase());
    structural.add(path.slice(path.lastIndexOf('/') + 1).toLowerCase());
  }
  for (const value of found.values) if (value.length <= 80) structural.add(value.toLowerCase());
  let prose = probe.replace(URL_PATTERN, ' ');
  for (const path of found.paths) prose = prose.split(path).join(' ');
  for (const word of prose.toLowerCase().split(/[^\p{L}\p{N}_]+/u)) {
    if (/[\u3040-\u30ff\u3400-\u9fff]/.test(word)) {
      // Scripts without spaces: character pairs stand for words.
      for (let i = 0; i + 1 < word.length; i++) words.add(word.slice(i, i + 2));
    } else if (Array.from(word).length >= 4) {
      words.add(word);
    }
  }
  return { structural, words };
}

// ---------------------------------------------------------------- checklists and todo tools

export type TodoStatus = 'pending' | 'in_progress' | 'completed' | 'cancelled';

export interface TodoEntry {
  text: string;
  status: TodoStatus;
}

const CHECKLIST = /^\s*(?:[-*+]|\d+[.)])\s+\[([ xX~\-/])\]\s+(.+)$/;

/** Markdown checklist items (`- [ ] open`, `- [x] done`, `- [~] doing`, `- [-] dropped`). */
export function checklistOf(text: string): TodoEntry[] {
  if (!text.includes('[')) return [];
  const items: TodoEntry[] = [];
  for (const line of text.split('\n')) {
    const match = CHECKLIST.exec(line.length > 600 ? line.slice(0, 600) : line);
    if (!match) continue;
    const mark = match[1].toLowerCase();
    const status: TodoStatus = mark === 'x' ? 'completed' : mark === '~' || mark === '/' ? 'in_progress' : mark === '-' ? 'cancelled' : 'pending';
    items.push({ text: clipText(match[2], 300), status });
  }
  return items;
}

const TODO_LIST_KEYS = ['todos', 'todoList', 'todo_list', 'plan', 'items', 'tasks', 'steps', 'list', 'merge'];
const TODO_TEXT_KEYS = ['content', 'step', 'title', 'text', 'task', 'description', 'name', 'activeForm'];

function todoStatus(entry: Record<string, unknown>): TodoStatus {
  const raw = entry.status ?? entry.state;
  if (typeof raw === 'string') {
    const status = raw.toLowerCase().replace(/[\s-]+/g, '_');
    if (['completed', 'complete', 'done', 'finished', 'closed', 'resolved'].includes(status)) return 'completed';
    if (['in_progress', 'active', 'doing', 'started', 'running', 'wip'].includes(status)) return 'in_progress';
    if (['cancelled', 'canceled', 'skipped', 'dropped', 'abandoned'].includes(status)) return 'cancelled';
    return 'pending';
  }
  if (entry.done === true || entry.completed === true || entry.checked === true) return 'completed';
  return 'pending';
}

/**
 * The list a todo or plan tool call sets, whatever its dialect: OpenCode's
 * `todowrite {todos:[{content,status}]}`, Codex's `update_plan
 * {plan:[{step,status}]}`, VS Code's `manage_todo_list {todoList:[{title,status}]}`,
 * Claude Code's `TodoWrite`. Null when the call carries no list (a read).
 */
export function todoListOf(input: unknown): TodoEntry[] | null {
  if (typeof input === 'string') {
    const checklist = checklistOf(input);
    if (checklist.length > 0) return checklist;
    try {
      return todoListOf(JSON.parse(input));
    } catch {
      return null;
    }
  }
  if (typeof input !== 'object' || input === null) return null;
  const record = input as Record<string, unknown>;
  const list = Array.isArray(input)
    ? input
    : (TODO_LIST_KEYS.map((key) => record[key]).find(Array.isArray) ?? Object.values(record).find(Array.isArray));
  if (!Array.isArray(list)) return null;
  const entries: TodoEntry[] = [];
  for (const item of list) {
    if (typeof item === 'string') {
      entries.push({ text: clipText(item, 300), status: 'pending' });
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    const entry = item as Record<string, unknown>;
    const text = TODO_TEXT_KEYS.map((key) => entry[key]).find((value): value is string => typeof value === 'string' && value.trim() !== '');
    if (text) entries.push({ text: clipText(text, 300), status: todoStatus(entry) });
  }
  return entries;
}

// ---------------------------------------------------------------- tool calls

/** A shell command a tool call ran: `command` / `cmd` / `script` as a string or an argv array. */
export function commandOf(input: unknown): string | null {
  if (typeof input !== 'object' || input === null) return null;
  const record = input as Record<string, unknown>;
  const value = record.command ?? record.cmd ?? record.script;
  if (typeof value === 'string') return value.trim() || null;
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) {
    // Codex's shell runs ["bash", "-lc", "<script>"]: the script is what matters.
    return value.length === 3 && /^-\w*c$/.test(value[1]) ? value[2] : value.join(' ');
  }
  return null;
}

const PATH_KEYS = ['path', 'file_path', 'filePath', 'file', 'filename', 'target_file', 'absolute_path', 'notebook_path', 'uri', 'target'];
const PATH_LIST_KEYS = ['paths', 'files', 'filePaths', 'file_paths'];

/** Paths a tool call names in its input fields. */
export function inputPathsOf(input: unknown): string[] {
  if (typeof input !== 'object' || input === null) return [];
  const record = input as Record<string, unknown>;
  const paths: string[] = [];
  for (const key of PATH_KEYS) {
    const value = record[key];
    if (typeof value === 'string' && value.length <= 300 && value.trim()) paths.push(value.trim().replace(/^file:\/\//, ''));
  }
  for (const key of PATH_LIST_KEYS) {
    const value = record[key];
    if (Array.isArray(value)) for (const item of value) if (typeof item === 'string' && item.length <= 300) paths.push(item);
  }
  return paths;
}

/** What a tool does to the files it names, by its name. */
export function fileActionOf(toolName: string): 'read' | 'edited' | null {
  const name = toolName.toLowerCase();
  if (/edit|write|patch|replace|create|insert|apply|update|rename|move|delete|remove|save|str_replace/.test(name)) return 'edited';
  if (/read|view|cat|open|get|glob|list|ls|search|grep|find/.test(name)) return 'read';
  return null;
}

const DIFF_HEADER = /^(?:diff --git a\/(\S+) b\/\S+|\+\+\+ b\/(\S+)|\*\*\* (?:Update|Add|Delete) File: (.+)|Index: (\S+))\s*$/;

/** The file a diff header line names (git, unified, Codex apply_patch), or null. */
export function diffHeaderPath(line: string): string | null {
  if (line.length > 400) return null;
  const match = DIFF_HEADER.exec(line);
  if (!match) return null;
  return (match[1] ?? match[2] ?? match[3] ?? match[4]).trim();
}

/** The files a patch text touches. */
export function patchPathsOf(text: string): string[] {
  if (!text.includes('diff --git') && !text.includes('+++ ') && !text.includes('*** ') && !text.includes('Index: ')) return [];
  const paths = new Set<string>();
  for (const line of text.split('\n')) {
    const path = diffHeaderPath(line);
    if (path) paths.add(path);
  }
  return [...paths];
}
