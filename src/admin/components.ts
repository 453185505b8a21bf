/**
 * The admin site's own React components (src/admin/components/*.tsx) by the name AdminJS knows
 * them by. Resource options refer to these names; the browser finds the code in the components
 * bundle (bundle.ts), so the sources are needed only to build that bundle.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ADMIN_COMPONENTS = {
  ClearLoginFailures: 'ClearLoginFailures.tsx',
  Dashboard: 'Dashboard.tsx',
  Indexes: 'Indexes.tsx',
  Manual: 'Manual.tsx',
  Operations: 'Operations.tsx',
  PermissionPicker: 'PermissionPicker.tsx',
  PermissionsEdit: 'PermissionsEdit.tsx',
  ScheduleToggle: 'ScheduleToggle.tsx',
  SetPassword: 'SetPassword.tsx',
  TokenKey: 'TokenKey.tsx',
} as const;

export type AdminComponent = keyof typeof ADMIN_COMPONENTS;

export const COMPONENT_NAMES = Object.keys(ADMIN_COMPONENTS) as AdminComponent[];

/**
 * The directory with the component sources: next to this module when run from src/ (tsx, tests), or
 * back in src/ when run from the compiled dist/src/admin/ (tsc does not emit .tsx sources there).
 * Null when neither exists (an image that ships only a prebuilt bundle).
 */
export function componentSourceDir(): string | null {
  const candidates = [new URL('./components/', import.meta.url), new URL('../../../src/admin/components/', import.meta.url)];
  for (const candidate of candidates) {
    const dir = fileURLToPath(candidate);
    if (COMPONENT_NAMES.every((name) => existsSync(`${dir}${ADMIN_COMPONENTS[name]}`))) return dir;
  }
  return null;
}

/** A component name for resource options, checked against the list above at compile time. */
export const component = (name: AdminComponent): AdminComponent => name;
