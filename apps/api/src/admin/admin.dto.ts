import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength, MinLength } from 'class-validator';

export class CreateTenantDto {
  @ApiProperty({ example: 'acme' })
  @IsString() @MinLength(1) @MaxLength(200)
  name: string;
}

export class IssueApiKeyDto {
  @ApiPropertyOptional({ example: 'ci' })
  @IsOptional() @IsString() @MaxLength(200)
  name?: string;
}
