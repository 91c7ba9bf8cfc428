/**
 * Nothing secret in any message (docs/adr/0040): every text a message carries from status passes here. Status is
 * already kept free of secrets (ARCHITECTURE invariant 5); this is the second line, at the border where text
 * leaves the cluster for a chat room or a forge.
 */

const MASK = '***';

/** Credentials a URL may carry in its userinfo: `https://user:token@host` → `https://***@host`. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]*(?::[^\s/@]*)?@/gi;
/** Query parameters that carry credentials (presigned URLs, OAuth, Slack/Teams signatures). */
const SECRET_QUERY = /([?&](?:access_token|token|sig|signature|key|apikey|api_key|password|secret)=)[^&\s#]+/gi;
/** `Authorization: Bearer …` / `token …` quoted into an error message. */
const AUTH_SCHEME = /\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}/gi;
/** Well-known token shapes: GitHub (ghp_, gho_, ghs_, github_pat_), GitLab (glpat-), Slack (xox?-). */
const TOKEN_SHAPES =
  /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}|xox[abposr]-[A-Za-z0-9-]{10,})\b/g;
/** Slack / Teams incoming-webhook paths: the URL is the credential. */
const WEBHOOK_PATHS = /(hooks\.slack\.com\/services\/|\.webhook\.office\.com\/|\/workflows\/)[^\s"']+/gi;

/**
 * `text` with every credential-looking part masked, and every value of `known` (the Notifier's own Secret values)
 * replaced wherever it occurs. Values shorter than 4 characters are not searched for: they would mask words.
 */
export function redactSecrets(text: string, known: readonly string[] = []): string {
  let out = text;
  for (const value of [...known].sort((a, b) => b.length - a.length)) {
    if (value.length >= 4) out = out.split(value).join(MASK);
  }
  return out
    .replace(URL_USERINFO, `$1${MASK}@`)
    .replace(SECRET_QUERY, `$1${MASK}`)
    .replace(AUTH_SCHEME, `$1 ${MASK}`)
    .replace(TOKEN_SHAPES, MASK)
    .replace(WEBHOOK_PATHS, `$1${MASK}`);
}
