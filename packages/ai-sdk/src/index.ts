export { SessionStoreChat } from './chat';
export type { ChatPrompt, SessionStoreChatOptions } from './chat';
