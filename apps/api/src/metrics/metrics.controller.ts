import { Controller, Get, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { MetricsGuard } from '../auth/guards';
import { ProblemResponses } from '../openapi/problem';
import { BodyResponse } from '../openapi/responses';
import { Metrics } from './metrics';

@ApiTags('health')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  @Get()
  @UseGuards(MetricsGuard)
  @ApiOperation({
    summary: 'Prometheus metrics (text exposition format)',
    description: 'Open unless the deployment sets METRICS_TOKEN; then `Authorization: Bearer <METRICS_TOKEN>` is required (401 `invalid_metrics_token` otherwise).',
  })
  @BodyResponse(200, 'text/plain', 'The metrics, Prometheus text format 0.0.4')
  @ProblemResponses(401)
  async scrape(@Res() res: Response): Promise<void> {
    res.type(this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }
}
