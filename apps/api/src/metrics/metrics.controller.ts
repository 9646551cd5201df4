import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { BodyResponse } from '../openapi/responses';
import { Metrics } from './metrics';

@ApiTags('health')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  @Get()
  @ApiOperation({ summary: 'Prometheus metrics (text exposition format)' })
  @BodyResponse(200, 'text/plain', 'The metrics, Prometheus text format 0.0.4')
  async scrape(@Res() res: Response): Promise<void> {
    res.type(this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }
}
