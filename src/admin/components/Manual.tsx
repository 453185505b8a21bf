/*
 * The sidebar's "Manual" page: the service serves its own manual at /api/manual/ (a static site,
 * outside the admin site), so this page only sends the browser there, keeping a link for a
 * browser that does not follow. Bundled by AdminJS.
 */
import React, { useEffect } from 'react';
import { Box, H2, Text } from '@adminjs/design-system';

const MANUAL = '/api/manual/';

const Manual = () => {
  useEffect(() => {
    window.location.assign(MANUAL);
  }, []);
  return (
    <Box variant="white">
      <H2>Manual</H2>
      <Text>
        <a href={MANUAL} data-testid="manual-page-link">
          Open the manual
        </a>
        , served by this server.
      </Text>
    </Box>
  );
};

export default Manual;
