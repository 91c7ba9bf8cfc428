/** Real git servers on loopback (smart HTTP via git http-backend, SSH via Debian's sshd) and repo fixtures. */
export { startGitHttpServer } from './http-server.ts';
export type { GitHttpAuth, GitHttpServer, GitHttpServerOptions } from './http-server.ts';
export { startGitSshServer } from './ssh-server.ts';
export type { GitSshServer } from './ssh-server.ts';
export {
  commitFiles,
  createRepo,
  createRepoRoot,
  deletePath,
  git,
  gitEnvForTests,
  headOf,
  moveBranch,
  repoDirName,
  revertCommit,
  setHead,
  tag,
} from './repo.ts';
export type { FileChange, TestRepo } from './repo.ts';
export { installProcessSpy } from './process-spy.ts';
export type { ProcessSpy, SpiedProcess } from './process-spy.ts';
export { startGitFixture } from './fixture.ts';
export type { GitFixture } from './fixture.ts';
