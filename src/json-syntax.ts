// Where a JSON text stops being JSON, as a line and a column: JSON.parse's own message gives a
// character offset at best (and on Node 20 sometimes the whole text instead).
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';

const WORDS: Record<string, string> = {
  InvalidSymbol: 'invalid symbol',
  InvalidNumberFormat: 'invalid number',
  PropertyNameExpected: 'property name expected (a trailing comma?)',
  ValueExpected: 'value expected',
  ColonExpected: "':' expected",
  CommaExpected: "',' expected",
  CloseBraceExpected: "'}' expected",
  CloseBracketExpected: "']' expected",
  EndOfFileExpected: 'end of file expected',
  InvalidCommentToken: 'comments are not allowed',
  UnexpectedEndOfComment: 'unexpected end of comment',
  UnexpectedEndOfString: 'unexpected end of string',
  UnexpectedEndOfNumber: 'unexpected end of number',
  InvalidUnicode: 'invalid unicode escape',
  InvalidEscapeCharacter: 'invalid escape character',
  InvalidCharacter: 'invalid character',
};

/** `line 3, column 8: value expected`, or null when the text is valid JSON. */
export function jsonSyntaxError(text: string): string | null {
  const errors: ParseError[] = [];
  parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (!first) return null;
  const before = text.slice(0, first.offset);
  const line = before.split('\n').length;
  const column = first.offset - (before.lastIndexOf('\n') + 1) + 1;
  const code = printParseErrorCode(first.error);
  return `line ${line}, column ${column}: ${WORDS[code] ?? code}`;
}
