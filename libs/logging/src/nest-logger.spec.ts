import pino from 'pino';
import { PinoNestLogger } from './nest-logger';

/** The lines a PinoNestLogger writes, parsed. */
function capture(): { logger: PinoNestLogger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = new PinoNestLogger(pino({ base: null }, { write: (line: string) => lines.push(JSON.parse(line)) }));
  return { logger, lines };
}

describe('PinoNestLogger', () => {
  it('given a message with fields ({ msg, ...fields }), when it is logged, then the fields are the line’s own and msg its message', () => {
    const { logger, lines } = capture();
    logger.warn({ requestId: 'req-1', tenantId: 't-1', msg: 'export of session s cut' }, 'TransferService');
    expect(lines).toEqual([expect.objectContaining({ level: 40, msg: 'export of session s cut', requestId: 'req-1', tenantId: 't-1', context: 'TransferService' })]);
  });

  it('given a plain object or a string, when it is logged, then it is the message, as before', () => {
    const { logger, lines } = capture();
    logger.log({ some: 'value' }, 'Ctx');
    logger.warn('plain text');
    expect(lines.map((l) => l.msg)).toEqual(['{"some":"value"}', 'plain text']);
    expect(lines[0]).not.toHaveProperty('some');
  });
});
