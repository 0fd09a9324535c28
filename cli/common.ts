// Helpers every subcommand shares: argument parsers, the --json option, errors, configuration.
import { InvalidArgumentError, Option } from 'commander';
import { loadConfig, type Config } from '../core/config.ts';

export function positiveInt(name: string, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < 1 || n > max) throw new InvalidArgumentError(`${name} must be a whole number from 1 to ${max}.`);
    return n;
  };
}

export const jsonOption = (): Option => new Option('--json', 'print the result as one JSON object on stdout');

export class CliError extends Error {}

let config: Config | undefined;
/** Configuration, read once on first use so that --help works even with a bad environment. */
export function cliConfig(): Config {
  config ??= loadConfig();
  return config;
}
