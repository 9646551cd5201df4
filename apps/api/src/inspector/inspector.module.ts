import { Module } from '@nestjs/common';
import { InspectorController } from './inspector.controller';

/** Serves the inspector page at /inspect (not part of the OpenAPI document). */
@Module({ controllers: [InspectorController] })
export class InspectorModule {}
