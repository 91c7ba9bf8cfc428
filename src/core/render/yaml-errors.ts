import type { ErrorCode } from 'yaml';

/**
 * The parser's messages can quote the offending text (an escape sequence, an alias name, a tag), which
 * may be part of a Secret: messages are built from the error code only, plus line and column.
 */
const phrases: Record<ErrorCode, string> = {
  ALIAS_PROPS: 'an alias cannot carry a tag or an anchor',
  BAD_ALIAS: 'invalid alias',
  BAD_DIRECTIVE: 'invalid or unsupported directive',
  BAD_DQ_ESCAPE: 'invalid escape sequence in a double-quoted string',
  BAD_INDENT: 'bad indentation',
  BAD_PROP_ORDER: 'anchor or tag in the wrong place',
  BAD_SCALAR_START: 'a plain value cannot start with this character (quote the value)',
  BLOCK_AS_IMPLICIT_KEY: 'nested mapping where a value was expected (missing line break or quotes?)',
  BLOCK_IN_FLOW: 'block collection inside a flow collection',
  DUPLICATE_KEY: 'duplicate mapping key',
  IMPOSSIBLE: 'unparseable input',
  KEY_OVER_1024_CHARS: 'implicit key longer than 1024 characters',
  MISSING_CHAR: 'missing closing quote or bracket',
  MULTILINE_IMPLICIT_KEY: 'implicit key spans several lines',
  MULTIPLE_ANCHORS: 'more than one anchor on a node',
  MULTIPLE_DOCS: 'unexpected document start',
  MULTIPLE_TAGS: 'more than one tag on a node',
  NON_STRING_KEY: 'a mapping key must be a scalar, not a collection',
  RESOURCE_EXHAUSTION: 'nested too deeply',
  TAB_AS_INDENT: 'tab used for indentation (use spaces)',
  TAG_RESOLVE_FAILED: 'unknown or custom tag (only the standard YAML 1.2 tags are allowed)',
  UNEXPECTED_TOKEN: 'unexpected token',
  BAD_COLLECTION_TYPE: 'collection tag does not match the collection',
};

export function describeYamlError(code: ErrorCode): string {
  return phrases[code] ?? 'invalid YAML';
}
