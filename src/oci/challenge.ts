/**
 * `WWW-Authenticate` challenges (RFC 7235): `Bearer realm="…",service="…",scope="…"`
 * or `Basic realm="…"`; several challenges may share one header. Parameter
 * values may be quoted and hold commas (`scope="repository:a:pull,push"`).
 */

export interface AuthChallenge {
  /** Lower-cased scheme: `bearer`, `basic`, … */
  readonly scheme: string;
  /** Parameters by lower-cased name. */
  readonly params: Readonly<Record<string, string>>;
}

export function parseChallenges(header: string): AuthChallenge[] {
  const challenges: { scheme: string; params: Record<string, string> }[] = [];
  let i = 0;
  const skipSpace = () => {
    while (i < header.length && /[\s,]/.test(header[i]!)) i++;
  };
  const readToken = () => {
    const start = i;
    while (i < header.length && /[!#$%&'*+\-.^_`|~0-9A-Za-z]/.test(header[i]!)) i++;
    return header.slice(start, i);
  };
  while (i < header.length) {
    skipSpace();
    const word = readToken();
    if (word === '') {
      i++;
      continue;
    }
    while (header[i] === ' ') i++;
    if (header[i] === '=' && challenges.length > 0) {
      // a parameter of the current challenge
      i++;
      while (header[i] === ' ') i++;
      let value = '';
      if (header[i] === '"') {
        i++;
        while (i < header.length && header[i] !== '"') {
          if (header[i] === '\\' && i + 1 < header.length) i++;
          value += header[i];
          i++;
        }
        i++;
      } else {
        const start = i;
        while (i < header.length && header[i] !== ',') i++;
        value = header.slice(start, i).trim();
      }
      challenges[challenges.length - 1]!.params[word.toLowerCase()] = value;
    } else {
      challenges.push({ scheme: word.toLowerCase(), params: {} });
    }
  }
  return challenges;
}
