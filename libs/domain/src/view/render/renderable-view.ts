import { Message } from '../../events';
import { ViewSource } from '../types';

/** What a renderer needs from a model view: the system prompt and the normalized messages. */
export interface RenderableView {
  system?: string;
  messages: readonly Message[];
  /** Where each message came from (a ModelView has them): cache breakpoints follow the pivot's prefix and the pins. */
  sources?: readonly Pick<ViewSource, 'origin'>[];
}
