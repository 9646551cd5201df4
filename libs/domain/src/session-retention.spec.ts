/**
 * Session retention, given sessions' last activity / when the job runs at
 * `now` under a tenant's policy / then the sessions to archive or delete.
 */
import { expiredSessions, idleCutoff, SessionActivity, SessionRetentionPolicy } from './session-retention';

const NOW = new Date('2026-11-25T12:00:00.000Z');
const HOUR = 3600;
const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * HOUR * 1000);
const session = (sessionId: string, idleHours: number, archivedHoursAgo?: number): SessionActivity => ({
  sessionId,
  lastActivityAt: hoursAgo(idleHours),
  archivedAt: archivedHoursAgo === undefined ? null : hoursAgo(archivedHoursAgo),
});

describe('idleCutoff', () => {
  it('given an age, then the instant that age before now', () => {
    expect(idleCutoff(NOW, { idleSeconds: 2 * HOUR, action: 'archive' })).toEqual(hoursAgo(2));
  });
});

describe('expiredSessions', () => {
  const archiveAfterDay: SessionRetentionPolicy = { idleSeconds: 24 * HOUR, action: 'archive' };
  const deleteAfterDay: SessionRetentionPolicy = { idleSeconds: 24 * HOUR, action: 'delete' };

  it('given sessions idle longer and shorter than the age, when archiving, then only the idle ones are archived', () => {
    const sessions = [session('old', 48), session('fresh', 1), session('older', 24 * 30)];
    expect(expiredSessions(NOW, archiveAfterDay, sessions)).toEqual({ archive: ['old', 'older'], delete: [] });
  });

  it('given sessions idle longer and shorter than the age, when deleting, then only the idle ones are deleted', () => {
    const sessions = [session('old', 48), session('fresh', 1)];
    expect(expiredSessions(NOW, deleteAfterDay, sessions)).toEqual({ archive: [], delete: ['old'] });
  });

  it('given a session idle exactly the age, then it is kept (only strictly older expires)', () => {
    expect(expiredSessions(NOW, deleteAfterDay, [session('edge', 24)])).toEqual({ archive: [], delete: [] });
    const justOver = { ...session('over', 24), lastActivityAt: new Date(hoursAgo(24).getTime() - 1) };
    expect(expiredSessions(NOW, deleteAfterDay, [justOver])).toEqual({ archive: [], delete: ['over'] });
  });

  it('given an idle session already archived, when archiving, then nothing happens (a second run is a no-op)', () => {
    expect(expiredSessions(NOW, archiveAfterDay, [session('done', 48, 12)])).toEqual({ archive: [], delete: [] });
  });

  it('given an idle archived session, when deleting, then it is deleted too', () => {
    expect(expiredSessions(NOW, deleteAfterDay, [session('archived', 48, 12), session('fresh', 2, 1)])).toEqual({
      archive: [],
      delete: ['archived'],
    });
  });

  it('given no sessions, then nothing expires', () => {
    expect(expiredSessions(NOW, archiveAfterDay, [])).toEqual({ archive: [], delete: [] });
  });

  it('given a later now, then the same sessions expire (the clock is the only time input)', () => {
    const sessions = [session('s', 1)];
    expect(expiredSessions(NOW, archiveAfterDay, sessions).archive).toEqual([]);
    expect(expiredSessions(new Date(NOW.getTime() + 24 * HOUR * 1000), archiveAfterDay, sessions).archive).toEqual(['s']);
  });
});
