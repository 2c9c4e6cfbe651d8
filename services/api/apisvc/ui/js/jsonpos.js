// jsonpos.js: where each value of a JSON text starts and ends, by JSON path
// ($.nodes[1].depends_on[0]), so that validation problems can be
// highlighted in the text the user pasted. Tolerant: it stops quietly at
// the first syntax error and returns what it found.

export function jsonPositions(text) {
  const out = new Map();
  let i = 0;
  const ws = () => { while (i < text.length && " \t\r\n".includes(text[i])) i++; };
  const str = () => {
    const start = i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i));
  };
  const value = (path) => {
    ws();
    const start = i;
    const c = text[i];
    if (c === "{") {
      i++; ws();
      while (i < text.length && text[i] !== "}") {
        ws();
        if (text[i] !== '"') throw new Error("key");
        const key = str();
        ws(); if (text[i++] !== ":") throw new Error(":");
        value(/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`);
        ws(); if (text[i] === ",") i++;
        ws();
      }
      i++;
    } else if (c === "[") {
      i++; ws();
      for (let n = 0; i < text.length && text[i] !== "]"; n++) {
        value(`${path}[${n}]`);
        ws(); if (text[i] === ",") i++;
        ws();
      }
      i++;
    } else if (c === '"') {
      str();
    } else {
      while (i < text.length && !",]} \t\r\n".includes(text[i])) i++;
    }
    if (i === start) throw new Error("empty");
    out.set(path, [start, i]);
  };
  try { value("$"); } catch { /* keep what was found */ }
  return out;
}

// locate returns the [start, end] of path, or of its nearest ancestor found.
export function locate(positions, path) {
  for (let p = path; p; p = p.replace(/(\.[^.[]+|\[[^\]]*\])$/, "")) {
    if (positions.has(p)) return positions.get(p);
    if (p === "$") break;
  }
  return null;
}

// lineOf is the 1-based line of offset in text.
export function lineOf(text, offset) {
  let n = 1;
  for (let k = 0; k < offset && k < text.length; k++) if (text[k] === "\n") n++;
  return n;
}
