// Help text, generated from the command table so it lists exactly the
// options the parser accepts.

import type { CommandSpec, OptionSpec } from './command-spec.js';

export function optionLabel(name: string, option: OptionSpec): string {
  const short = option.short === undefined ? '    ' : `-${option.short}, `;
  const value = option.type === 'string' ? ` <${option.valueName ?? 'value'}>${option.multiple === true ? ' (repeatable)' : ''}` : '';
  return `${short}--${name}${value}`;
}

export function commandHelp(command: CommandSpec): string {
  const lines = [`usage: seglog ${command.name} [options] ${command.args}`.trimEnd(), '', command.summary, ''];
  lines.push(...command.description, '', 'options:');
  const labels = Object.entries(command.options).map(([name, option]) => [optionLabel(name, option), option] as const);
  const width = Math.max(...labels.map(([label]) => label.length));
  for (const [label, option] of labels) {
    const defaultText = option.defaultValue === undefined ? '' : ` (default ${option.defaultValue})`;
    lines.push(`  ${label.padEnd(width)}  ${option.description}${defaultText}`);
  }
  return `${lines.join('\n')}\n`;
}

export function mainHelp(commands: readonly CommandSpec[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = [
    'usage: seglog <command> [options] <args>',
    '',
    'Operator tool for seglog data directories (Kafka on-disk format).',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'options:',
    '  -h, --help     show this help (or a command\'s: seglog <command> --help)',
    '      --debug    print the stack trace of an error',
    '',
    'exit codes: 0 success (verify: no problem found), 1 an error or (verify) problems found, 2 usage error',
  ];
  return `${lines.join('\n')}\n`;
}
