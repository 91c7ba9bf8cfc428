import { describe, expect, it } from 'vitest';
import { resourceOfPath } from './request-resource.ts';

describe('resourceOfPath', () => {
  it.each([
    ['/api/v1/namespaces/team-a/configmaps/web', 'configmaps'],
    ['/api/v1/namespaces/team-a/configmaps', 'configmaps'],
    ['/apis/packagesync.io/v1alpha1/namespaces/team-a/packagesyncs/web/status', 'packagesyncs'],
    ['/apis/packagesync.io/v1alpha1/packagesyncs', 'packagesyncs'],
    ['/apis/apps/v1/namespaces/team-a/deployments/web?fieldManager=packagesync&force=true', 'deployments'],
    ['/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', 'selfsubjectaccessreviews'],
    ['/apis/rbac.authorization.k8s.io/v1/clusterroles/admin', 'clusterroles'],
    ['/api/v1/namespaces', 'namespaces'],
    ['/api/v1/namespaces/team-a', 'namespaces'],
    ['/api/v1/namespaces/team-a/status', 'namespaces'],
    ['/api/v1/namespaces/team-a/finalize', 'namespaces'],
    ['/api/v1/nodes/n1/proxy', 'nodes'],
    ['/api', ''],
    ['/api/v1', ''],
    ['/apis', ''],
    ['/apis/apps/v1', ''],
    ['/version', ''],
    ['/openapi/v3', ''],
    ['/metrics', ''],
  ])('%s → %j', (path, resource) => {
    expect(resourceOfPath(path)).toBe(resource);
  });
});
