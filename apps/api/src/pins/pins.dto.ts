import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';

export class AddPinDto {
  @ApiProperty({
    description: "Text the model keeps seeing verbatim right after the pivot's prefix, never summarized; counts against pins.maxTokens",
    example: 'Never touch the production database; staging is db-staging:5432.',
    maxLength: 1_000_000,
  })
  @IsString() @MinLength(1) @MaxLength(1_000_000)
  text: string;
}
