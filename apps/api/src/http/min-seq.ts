import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** The `minSeq` query parameter of the reads a read replica may serve (docs/scaling.md). */
export const MinSeqParam = () =>
  applyDecorators(
    ApiPropertyOptional({
      description:
        'Read-your-writes with a read replica: the answer reflects at least this seq (pass the headSeq of your last append); a replica behind it is skipped for the primary',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
    }),
    IsOptional(),
    Type(() => Number),
    IsInt(),
    Min(0),
    Max(Number.MAX_SAFE_INTEGER),
  );
