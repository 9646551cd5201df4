/** The keys of a JSON pointer, as ajv's errors give an instance path (`/events/0/data` → events, 0, data). */
export const pointerKeys = (pointer: string): string[] =>
  pointer
    .split('/')
    .slice(1)
    .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
