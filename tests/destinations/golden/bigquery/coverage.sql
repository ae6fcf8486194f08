SELECT CASE WHEN `loaded_at` >= %s THEN 1 ELSE 0 END AS `_co_recent`, COUNT(*), COUNT(`actor_login`), COUNT(`score`) FROM `acme-analytics-42`.`raw_events`.`events` WHERE `loaded_at` >= %s GROUP BY 1
