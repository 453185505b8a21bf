/*
 * The admin dashboard: how many users, groups, permissions, tokens and task runs there are, with
 * links to where an administrator usually goes next. Data from the dashboard handler
 * (src/admin/dashboard.ts). Bundled by AdminJS (see src/admin/bundle.ts).
 */
import React, { useEffect, useState } from 'react';
import { ApiClient } from 'adminjs';
import { Box, H2, H4, Text } from '@adminjs/design-system';
import { errorMessage } from './shared/admin-fetch.js';
import { LoadFailed, Loading } from './shared/page-state.js';

const api = new ApiClient();

/** What the dashboard handler answers. */
interface DashboardData {
  title: string;
  rootPath: string;
  counts: { users: number; groups: number; permissions: number; tokens: number; taskRuns: number };
}

interface CardProps {
  label: string;
  count: number;
  href: string;
  testId: string;
}

const Card = ({ label, count, href, testId }: CardProps) => (
  <Box
    as="a"
    href={href}
    data-testid={testId}
    variant="card"
    flex
    flexDirection="column"
    mr="lg"
    mb="lg"
    style={{ textDecoration: 'none', color: 'inherit', flex: '1 1 9rem' }}
  >
    <Text fontSize="32px" fontWeight="bold">
      {count}
    </Text>
    <Text mt="sm">{label}</Text>
  </Box>
);

const Dashboard = () => {
  const [data, setData] = useState<DashboardData | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    api
      .getDashboard()
      .then((response) => setData(response.data as DashboardData))
      .catch((e: unknown) => setError(errorMessage(e)));
  }, []);

  if (error) return <LoadFailed message={`The dashboard could not be loaded: ${error}`} />;
  if (!data) return <Loading />;

  const root = data.rootPath;
  return (
    <Box variant="grey">
      <Box variant="white" mb="xl">
        <H2 data-testid="dashboard-title">{data.title}: administration</H2>
        <Text>
          Manage who may use the API: users and their passwords, groups, permissions and API tokens. Grant access to data store and catalog
          collections and to tasks with the permission picker.
        </Text>
      </Box>
      <Box flex flexDirection="row" flexWrap="wrap">
        <Card label="Users" count={data.counts.users} href={`${root}/resources/User`} testId="count-users" />
        <Card label="Groups" count={data.counts.groups} href={`${root}/resources/Group`} testId="count-groups" />
        <Card label="Permissions" count={data.counts.permissions} href={`${root}/resources/Permission`} testId="count-permissions" />
        <Card label="API tokens" count={data.counts.tokens} href={`${root}/resources/Token`} testId="count-tokens" />
        <Card label="Task runs" count={data.counts.taskRuns} href={`${root}/resources/TaskLog`} testId="count-tasks" />
      </Box>
      <Box variant="white">
        <H4>Next steps</H4>
        <ul style={{ lineHeight: 1.8, paddingLeft: '1.2rem', listStyle: 'disc' }}>
          <li>
            <a href={`${root}/resources/User/actions/new`}>Add a user</a> (with a password) or{' '}
            <a href={`${root}/resources/Group/actions/new`}>a group</a>
          </li>
          <li>
            <a href={`${root}/resources/Permission/actions/picker`}>Grant access</a> to a database, a collection or a task
          </li>
          <li>
            <a href={`${root}/resources/Token/actions/issue`}>Issue an API token</a> for a script
          </li>
          <li>
            <a href="/api/">Open the browsable API</a>
          </li>
          <li>
            <a href="/api/manual/" data-testid="manual-link">
              Read the manual
            </a>
            , served by this server
          </li>
        </ul>
      </Box>
    </Box>
  );
};

export default Dashboard;
