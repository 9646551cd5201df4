import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Min } from 'class-validator';

export class RewindDto {
  @ApiProperty({
    description:
      'The last seq the view keeps: what clients appended after it (messages, steps) leaves the view; the log keeps it. At least 1, below the head, not inside the compacted range',
    example: 12,
    minimum: 1,
  })
  @IsInt() @Min(1)
  toSeq: number;
}
