/**
 * The admin site's words: resource names as people say them, Django-like field labels and the
 * custom actions' labels. English only (AdminJS's defaults fill in everything not named here).
 */
import type { Locale } from 'adminjs';

export function adminLocale(): Locale {
  return {
    language: 'en',
    availableLanguages: ['en'],
    translations: {
      en: {
        labels: {
          User: 'Users',
          Group: 'Groups',
          Permission: 'Permissions',
          Token: 'API tokens',
          TaskLog: 'Task history',
        },
        pages: { operations: 'Operations', manual: 'Manual' },
        actions: {
          picker: 'Grant access',
          setPassword: 'Set password',
          issue: 'Issue token',
          rotate: 'Rotate',
        },
        resources: {
          User: {
            properties: {
              username: 'Username',
              newPassword: 'Password',
              email: 'E-mail address',
              first_name: 'First name',
              last_name: 'Last name',
              is_active: 'Active',
              is_staff: 'Staff status',
              is_superuser: 'Superuser status',
              groups: 'Groups',
              permissions: 'Permissions',
              date_joined: 'Date joined',
              last_login: 'Last login',
            },
          },
          Group: { properties: { name: 'Name', permissions: 'Permissions' } },
          Permission: { properties: { codename: 'Codename', name: 'Name', area: 'Area' } },
          Token: { properties: { user: 'User', key_prefix: 'Key', created: 'Created' } },
          TaskLog: {
            properties: {
              task_id: 'Task id',
              task_name: 'Task',
              user: 'User',
              timestamp: 'Submitted',
              queue: 'Queue',
              tags: 'Tags',
              args: 'args',
              kwargs: 'kwargs',
            },
          },
        },
      },
    },
  };
}
