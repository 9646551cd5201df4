export { NATIVE_FORMATS, nativeAppendRequest } from './native-append';
export type { NativeFormat } from './native-append';
