/*
 * What a page of the admin site shows before its data is there: a spinner while it loads, the
 * reason when it could not be loaded. Both on the grey page background, as the page itself.
 */
import React from 'react';
import { Box, Loader, MessageBox } from '@adminjs/design-system';

export const Loading = () => (
  <Box variant="grey">
    <Loader />
  </Box>
);

export const LoadFailed = ({ message }: { message: string }) => (
  <Box variant="grey">
    <MessageBox message={message} variant="danger" />
  </Box>
);
