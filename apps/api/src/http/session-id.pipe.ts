import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { ID_PATTERN } from '@app/domain';
import { sessionNotFound } from '../sessions/session-state';

/**
 * Global pipe for every `:sessionId` route parameter, present and future.
 * Session ids are created matching ID_PATTERN, so anything else cannot exist:
 * answer 404 before the id reaches SQL, where a NUL byte (`%00`) would make
 * PostgreSQL raise an encoding error (a 500) and a 10 KB id would cost a query.
 */
@Injectable()
export class SessionIdPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'param' && metadata.data === 'sessionId' && (typeof value !== 'string' || !ID_PATTERN.test(value))) {
      throw sessionNotFound(String(value));
    }
    return value;
  }
}
