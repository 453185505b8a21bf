/*
 * Edit field for `permissions` on users and groups: a multi-select of the codenames known to the
 * permission catalog instead of free text. New codenames come from the permission picker.
 */
import React, { useEffect, useState } from 'react';
import { ApiClient, flat } from 'adminjs';
import { Box, FormGroup, Label, Select, Text } from '@adminjs/design-system';

const api = new ApiClient();

const PermissionsEdit = ({ property, record, onChange }) => {
  const [known, setKnown] = useState([]);
  const current = flat.get(record.params, property.path) || [];

  useEffect(() => {
    api
      .resourceAction({ resourceId: 'Permission', actionName: 'codenames' })
      .then((r) => setKnown(r.data.codenames || []))
      .catch(() => setKnown([]));
  }, []);

  const names = new Map(known.map((p) => [p.codename, p.name]));
  const option = (codename) => ({ value: codename, label: names.has(codename) ? `${codename} (${names.get(codename)})` : codename });
  const options = known.map((p) => option(p.codename));
  const value = current.map(option);
  const root = window.REDUX_STATE && window.REDUX_STATE.paths ? window.REDUX_STATE.paths.rootPath : '';

  return (
    <FormGroup>
      <Label htmlFor={`${property.path}-select`}>{property.label}</Label>
      <Box data-testid={`${property.path}-select`}>
        <Select
          inputId={`${property.path}-select`}
          isMulti
          value={value}
          options={options}
          onChange={(selected) =>
            onChange(
              property.path,
              (selected || []).map((s) => s.value),
            )
          }
        />
      </Box>
      <Text variant="sm" mt="sm" color="grey60">
        Pick from the known permissions. To grant a database, collection or task that is not listed, use the{' '}
        <a href={`${root}/resources/Permission/actions/picker`}>permission picker</a>.
      </Text>
    </FormGroup>
  );
};

export default PermissionsEdit;
