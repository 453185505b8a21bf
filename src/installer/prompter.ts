/**
 * The questions the installer asks, through @inquirer/prompts: every prompt shows its default,
 * and an invalid answer shows the reason and is asked again (inquirer keeps the prompt open until
 * `validate` accepts). An interface, so the answer logic can be driven without a terminal.
 */
import { confirm, input, password, select } from '@inquirer/prompts';

export type Validator = (value: string) => string | undefined;

export interface Prompter {
  text(question: string, defaultValue: string | undefined, validate: Validator): Promise<string>;
  yesNo(question: string, defaultValue: boolean): Promise<boolean>;
  choose(question: string, choices: Array<{ value: string; name: string }>, defaultValue: string | undefined): Promise<string>;
  secret(question: string, validate: Validator): Promise<string>;
}

export function terminalPrompter(): Prompter {
  return {
    text: (message, defaultValue, validate) =>
      input({ message, default: defaultValue, validate: (value) => validate(value.trim()) ?? true }).then((v) => v.trim()),
    yesNo: (message, defaultValue) => confirm({ message, default: defaultValue }),
    choose: (message, choices, defaultValue) => select({ message, choices, default: defaultValue }),
    secret: (message, validate) => password({ message, mask: '*', validate: (value) => validate(value) ?? true }),
  };
}
