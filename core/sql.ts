// sql/**/*.sql, read once per process. Queries reach DuckDB, SQLite and PostgreSQL from these files
// only; values go in as parameters, never into the text.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './config.ts';

const SQL_DIR = path.join(REPO_ROOT, 'sql');
const cache = new Map<string, string>();

/** The text of sql/NAME.sql (NAME may name a subfolder: 'postgres/ledger_queries'). */
export function sqlFile(name: string): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(path.join(SQL_DIR, `${name}.sql`), 'utf8');
    cache.set(name, text);
  }
  return text;
}

/** The names (without .sql, sorted) of the files in sql/FOLDER. */
export function sqlFileNames(folder: string): string[] {
  return readdirSync(path.join(SQL_DIR, folder))
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.slice(0, -'.sql'.length))
    .sort();
}

/**
 * The sections of sql/NAME.sql, by name: a section starts at a line "-- KIND: NAME" and runs to the
 * next such line (its text trimmed). Text before the first header is the file's own comment. A
 * name given twice is a mistake in the file, refused here rather than one of the two silently used.
 */
export function sqlSections(name: string, kind: string): ReadonlyMap<string, string> {
  const parts = sqlFile(name).split(new RegExp(`^-- ${kind}: (\\S+)$`, 'm'));
  const out = new Map<string, string>();
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const key = parts[i] ?? '';
    if (out.has(key)) throw new Error(`sql/${name}.sql: ${kind} ${key} is written twice`);
    out.set(key, (parts[i + 1] ?? '').trim());
  }
  return out;
}

/** A SQL string literal for a path the program chose itself (never for request input). */
export function pathLiteral(p: string): string {
  return `'${p.replaceAll("'", "''")}'`;
}
