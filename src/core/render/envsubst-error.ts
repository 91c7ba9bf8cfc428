/** The error of the `${var}` expansion (envsubst.ts): a parse error, or (strict) an unset variable. */
export class EnvsubstError extends Error {
  /** The unset variable, for the strict-mode error. */
  readonly variable: string | undefined;
  constructor(message: string, variable?: string) {
    super(message);
    this.name = 'EnvsubstError';
    this.variable = variable;
  }
}
