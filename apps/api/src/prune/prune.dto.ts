import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional } from 'class-validator';

export class PruneRequestDto {
  @ApiPropertyOptional({
    default: false,
    description: 'Run the job in this request and answer 200 with what it did; otherwise queue it now and answer 202',
  })
  @IsOptional() @IsBoolean()
  wait?: boolean;
}
