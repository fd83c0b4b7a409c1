import {
  bboxGeometry,
  Budget,
  type Comparison,
  type CqlNode,
  type CqlOperand,
  CQL_LIMITS,
  dateLiteral,
  type Geometry,
  invalidFilter,
  position,
  ring,
  timestampLiteral,
} from './cql2-tree.ts';

// CQL2 text (OGC 21-065, the cql2-text encoding), the subset of docs/api-v1.md: a hand-written
// tokenizer and recursive-descent parser into the raw tree of cql2-tree.ts. Keywords are
// case-insensitive; property names are identifiers or double-quoted ("my field"); strings are
// single-quoted with '' for a quote. Anything else is a 400 naming the position.

type Token =
  | { kind: 'word'; text: string; at: number }
  | { kind: 'quoted'; text: string; at: number }
  | { kind: 'string'; text: string; at: number }
  | { kind: 'number'; value: number; at: number }
  | { kind: 'symbol'; text: string; at: number }
  | { kind: 'end'; at: number };

const SYMBOLS = ['<>', '<=', '>=', '=', '<', '>', '(', ')', ',', '[', ']'];

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i] as string;
    if (/\s/.test(char)) {
      i += 1;
      continue;
    }
    const at = i;
    if (char === "'" || char === '"') {
      let value = '';
      i += 1;
      for (;;) {
        if (i >= text.length)
          invalidFilter(`unterminated ${char === "'" ? 'string' : 'name'} at position ${at}`);
        const next = text[i] as string;
        if (next === char) {
          if (text[i + 1] === char) {
            value += char;
            i += 2;
            continue;
          }
          i += 1;
          break;
        }
        value += next;
        i += 1;
      }
      if (value.length > CQL_LIMITS.stringLength)
        invalidFilter(`a string longer than ${CQL_LIMITS.stringLength} characters at position ${at}`);
      tokens.push({ kind: char === "'" ? 'string' : 'quoted', text: value, at });
      continue;
    }
    const number = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(text.slice(i, i + 64));
    // A sign is a number's only where a value may start (after an operator, not after a value).
    const previous = tokens.at(-1);
    const valueBefore =
      previous !== undefined &&
      (previous.kind !== 'symbol' || previous.text === ')' || previous.text === ']');
    if (number && (/\d|\./.test(char) || !valueBefore)) {
      const value = Number(number[0]);
      if (!Number.isFinite(value)) invalidFilter(`the number at position ${at} is out of range`);
      tokens.push({ kind: 'number', value, at });
      i += number[0].length;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_.:]*/.exec(text.slice(i, i + 256));
    if (word) {
      tokens.push({ kind: 'word', text: word[0], at });
      i += word[0].length;
      continue;
    }
    const symbol = SYMBOLS.find((s) => text.startsWith(s, i));
    if (!symbol) invalidFilter(`unexpected character "${char}" at position ${at}`);
    tokens.push({ kind: 'symbol', text: symbol, at });
    i += symbol.length;
  }
  tokens.push({ kind: 'end', at: text.length });
  return tokens;
}

const COMPARISONS = new Set<string>(['=', '<>', '<', '<=', '>', '>=']);

/** Parses CQL2 text into the raw tree; a ValidationError (400) for anything malformed or too large. */
export function parseCql2Text(text: string): CqlNode {
  if (text.length > CQL_LIMITS.length)
    invalidFilter(`the filter is longer than ${CQL_LIMITS.length} characters`);
  const tokens = tokenize(text);
  const budget = new Budget();
  let index = 0;
  const peek = (): Token => tokens[index] as Token;
  const next = (): Token => {
    const token = peek();
    if (token.kind !== 'end') index += 1;
    return token;
  };
  const isWord = (token: Token, word: string) => token.kind === 'word' && token.text.toUpperCase() === word;
  const isSymbol = (token: Token, symbol: string) => token.kind === 'symbol' && token.text === symbol;
  const fail = (token: Token, expected: string): never =>
    invalidFilter(
      `expected ${expected} at position ${token.at}${token.kind === 'end' ? ' (end of filter)' : ''}`,
    );
  const expectSymbol = (symbol: string) => {
    const token = next();
    if (!isSymbol(token, symbol)) fail(token, `"${symbol}"`);
  };
  const acceptWord = (word: string) => {
    if (!isWord(peek(), word)) return false;
    index += 1;
    return true;
  };

  const orExpression = (depth: number): CqlNode => {
    budget.depth(depth);
    const args = [andExpression(depth)];
    while (acceptWord('OR')) args.push(andExpression(depth));
    return args.length === 1 ? (args[0] as CqlNode) : { op: 'or', args };
  };
  const andExpression = (depth: number): CqlNode => {
    const args = [notExpression(depth)];
    while (acceptWord('AND')) args.push(notExpression(depth));
    return args.length === 1 ? (args[0] as CqlNode) : { op: 'and', args };
  };
  const notExpression = (depth: number): CqlNode => {
    budget.depth(depth);
    if (acceptWord('NOT')) return { op: 'not', arg: notExpression(depth + 1) };
    return primary(depth);
  };
  const primary = (depth: number): CqlNode => {
    budget.node();
    const token = peek();
    if (isSymbol(token, '(')) {
      next();
      const inner = orExpression(depth + 1);
      expectSymbol(')');
      return inner;
    }
    if (isWord(token, 'S_INTERSECTS') || isWord(token, 'T_INTERSECTS')) {
      next();
      expectSymbol('(');
      const a = operand(depth + 1);
      expectSymbol(',');
      const b = operand(depth + 1);
      expectSymbol(')');
      return { op: isWord(token, 'S_INTERSECTS') ? 's_intersects' : 't_intersects', args: [a, b] };
    }
    const left = operand(depth + 1);
    const after = peek();
    if (after.kind === 'end' || isSymbol(after, ')') || isWord(after, 'AND') || isWord(after, 'OR')) {
      if ('value' in left && typeof left.value === 'boolean') return { op: 'literal', value: left.value };
    }
    if (after.kind === 'symbol' && COMPARISONS.has(after.text)) {
      next();
      return { op: after.text as Comparison, args: [left, operand(depth + 1)] };
    }
    if (acceptWord('IS')) {
      const negated = acceptWord('NOT');
      if (!acceptWord('NULL')) fail(peek(), 'NULL');
      const node: CqlNode = { op: 'isNull', arg: left };
      return negated ? { op: 'not', arg: node } : node;
    }
    const negated = acceptWord('NOT');
    let node: CqlNode;
    if (acceptWord('BETWEEN')) {
      const low = operand(depth + 1);
      if (!acceptWord('AND')) fail(peek(), 'AND');
      node = { op: 'between', args: [left, low, operand(depth + 1)] };
    } else if (acceptWord('LIKE')) {
      node = { op: 'like', args: [left, operand(depth + 1)] };
    } else if (acceptWord('IN')) {
      expectSymbol('(');
      const list = [operand(depth + 1)];
      while (isSymbol(peek(), ',')) {
        next();
        list.push(operand(depth + 1));
        if (list.length > CQL_LIMITS.listValues)
          invalidFilter(`an IN list holds at most ${CQL_LIMITS.listValues} values`);
      }
      expectSymbol(')');
      node = { op: 'in', value: left, list };
    } else {
      return fail(peek(), 'a comparison, BETWEEN, IN, LIKE or IS NULL');
    }
    return negated ? { op: 'not', arg: node } : node;
  };
  const stringArgument = (): string => {
    expectSymbol('(');
    const token = next();
    if (token.kind !== 'string') fail(token, 'a quoted string');
    expectSymbol(')');
    return (token as { text: string }).text;
  };
  const operand = (depth: number): CqlOperand => {
    budget.node();
    budget.depth(depth);
    const token = next();
    if (token.kind === 'string') return { value: token.text };
    if (token.kind === 'number') return { value: token.value };
    if (token.kind === 'quoted') return { property: token.text };
    if (token.kind !== 'word') return fail(token, 'a property or a value');
    const word = token.text.toUpperCase();
    if (word === 'TRUE' || word === 'FALSE') return { value: word === 'TRUE' };
    if (word === 'TIMESTAMP') return { timestamp: timestampLiteral(stringArgument()) };
    if (word === 'DATE') return { date: dateLiteral(stringArgument()) };
    if (word === 'INTERVAL') {
      expectSymbol('(');
      const start = intervalEnd();
      expectSymbol(',');
      const end = intervalEnd();
      expectSymbol(')');
      return { interval: [start, end] };
    }
    if (isSymbol(peek(), '(') && ['POINT', 'POLYGON', 'MULTIPOLYGON', 'BBOX'].includes(word)) {
      return { geometry: geometry(word) };
    }
    if (isSymbol(peek(), '(')) invalidFilter(`unknown function "${token.text}" at position ${token.at}`);
    return { property: token.text };
  };
  const intervalEnd = (): CqlOperand => {
    const token = next();
    // An end is a quoted instant or date, '..' (open), or TIMESTAMP(...) / DATE(...).
    if (token.kind === 'string') {
      if (token.text === '..') return { open: true };
      return /^\d{4}-\d{2}-\d{2}$/.test(token.text)
        ? { date: dateLiteral(token.text) }
        : { timestamp: timestampLiteral(token.text) };
    }
    if (isWord(token, 'TIMESTAMP')) return { timestamp: timestampLiteral(stringArgument()) };
    if (isWord(token, 'DATE')) return { date: dateLiteral(stringArgument()) };
    return fail(token, "an instant, a date or '..'");
  };
  const coordinate = (): [number, number] => {
    const x = next();
    const y = next();
    if (x.kind !== 'number' || y.kind !== 'number') return fail(y, 'a position "longitude latitude"');
    budget.vertex();
    return position([x.value, y.value]);
  };
  const list = <T>(item: () => T): T[] => {
    expectSymbol('(');
    const items = [item()];
    while (isSymbol(peek(), ',')) {
      next();
      items.push(item());
    }
    expectSymbol(')');
    return items;
  };
  const polygon = () => list(() => ring(list(coordinate)));
  const geometry = (word: string): Geometry => {
    if (word === 'POINT') {
      expectSymbol('(');
      const point = coordinate();
      expectSymbol(')');
      return { type: 'Point', coordinates: point };
    }
    if (word === 'POLYGON') return { type: 'Polygon', coordinates: polygon() };
    if (word === 'MULTIPOLYGON') return { type: 'MultiPolygon', coordinates: list(polygon) };
    const values = list(() => {
      const token = next();
      return token.kind === 'number' ? token.value : fail(token, 'a number');
    });
    return bboxGeometry(values);
  };

  const tree = orExpression(0);
  if (peek().kind !== 'end') fail(peek(), 'AND, OR or the end of the filter');
  return tree;
}
