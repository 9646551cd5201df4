import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { assertNoConstructorKeys } from '@app/domain';

/**
 * Global pipe, before validation, for bodies that are DTO classes: a
 * "constructor" key anywhere is a 400 rather than dropped on the way to the
 * class (bodies taken as `unknown`, such as event batches, pass untouched).
 */
@Injectable()
export class ClassBodyPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'body' && typeof metadata.metatype === 'function' && metadata.metatype !== Object) assertNoConstructorKeys(value);
    return value;
  }
}
