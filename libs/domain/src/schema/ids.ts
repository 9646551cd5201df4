/** Client-chosen ids (events, messages, tool calls, sessions) share one safe alphabet. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:~-]{0,127}$/;
