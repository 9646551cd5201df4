/**
 * Token figures, one module: ceil(chars / 4) (chars), the character-class
 * estimate stored with each event at append (text-estimate), the exact BPE
 * count (tokenizer), and a message's estimate built on them (message-tokens).
 */
export * from './chars';
export * from './message-tokens';
export * from './text-estimate';
export * from './tokenizer';
