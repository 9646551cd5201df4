import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, Matches } from 'class-validator';
import { ID_PATTERN } from '@app/domain';

export class ImportSessionQuery {
  @ApiPropertyOptional({ description: "The new session's id; the exported session's id when absent (409 session_exists when taken)", example: 'sess-copy-1' })
  @IsOptional()
  @Matches(ID_PATTERN)
  id?: string;
}
